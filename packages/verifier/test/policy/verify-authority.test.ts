// Admission-time results: per authority, then per policy, with the messages and classes the
// webhook shows in its deny responses.
import { type AuthorityResult, describeCause, type PolicyResult } from '@signet/core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FoundArtifact } from '../../src/artifacts.js';
import { bundleFormat } from '../../src/formats/bundle.js';
import { SIGNATURE_FORMATS } from '../../src/formats/index.js';
import { legacyFormat } from '../../src/formats/legacy.js';
import { type CompiledAuthorities, compileAuthorities } from '../../src/policy/compile.js';
import type { AuthorityCheck } from '../../src/policy/results.js';
import {
  consideredCount,
  discoveryRequests,
  type OtherFormat,
  verifyAuthority,
} from '../../src/policy/verify-authority.js';
import { type PolicyCheck, verifyPolicy } from '../../src/policy/verify-policy.js';
import { COSIGN_SIGN_PREDICATE_TYPE } from '../../src/sigstore/payload.js';
import { trustRootResolver } from '../../src/trust/compile.js';
import {
  bundleArtifact,
  type CertifiedKey,
  certify,
  DIGEST,
  dsseBundle,
  dsseEnvelope,
  ecKeyPair,
  GITHUB_ISSUER,
  hashedRekordBody,
  type Infra,
  legacyAttestation,
  legacySignature,
  logEntry,
  makeInfra,
  publicPem,
  REPO,
  rekorWitness,
  setAnnotation,
  signBytes,
  simpleSigningPayload,
  statement,
  WORKFLOW,
} from '../support/fixtures.js';
import { clusterImagePolicy } from '../support/policies.js';

const release = ecKeyPair();
const RELEASE_PEM = publicPem(release);
const SLSA = 'https://slsa.dev/provenance/v0.2';

let infra: Infra;
let signer: CertifiedKey;
beforeAll(async () => {
  infra = await makeInfra();
  signer = await certify(infra.ca);
});

async function compile(
  authorities: readonly unknown[],
  spec: Record<string, unknown> = {},
): Promise<CompiledAuthorities> {
  return compileAuthorities(clusterImagePolicy(authorities, spec), {
    trustRoots: trustRootResolver([], { publicGood: infra.trustRoot }),
  });
}

async function checkOne(
  authority: Record<string, unknown>,
  artifacts: readonly FoundArtifact[],
): Promise<AuthorityCheck> {
  const compiled = await compile([authority]);
  const [first] = compiled.authorities;
  if (first === undefined) throw new Error('no authority');
  return verifyAuthority(first, DIGEST, artifacts);
}

function keyedSignature(key = release, payload = simpleSigningPayload()) {
  return legacySignature(payload, signBytes(key, payload));
}

describe('signature authorities', () => {
  it('explain a denial with counts and the reason, as the deny message shows it', async () => {
    const check = await checkOne({ name: 'release-2026', key: { data: RELEASE_PEM } }, [
      keyedSignature(ecKeyPair()),
      keyedSignature(ecKeyPair()),
    ]);
    expect(check).toMatchObject({
      passed: false,
      counts: { found: 2, verified: 0 },
      failure: {
        kind: 'policy',
        code: 'NO_VALID_SIGNATURE',
        reason: 'no valid signature: 2 found, 0 verified',
      },
    });
    if (check.passed) throw new Error('unreachable');
    const text = describeCause(check.failure.cause);
    // each distinct reason once; which artifact said it stays in `rejected`, for logs
    expect(text).toMatch(/^signature does not match key "release-2026"/);
    expect(text.match(/does not match/g)).toHaveLength(1);
    expect(check.rejected.map((r) => r.source)).toEqual([
      `${REPO}:sha256-aaaa.sig`,
      `${REPO}:sha256-aaaa.sig`,
    ]);
    expect(text).not.toContain('[object Object]');
  });

  it('pass with one valid signature among invalid ones and report the signer', async () => {
    const check = await checkOne({ name: 'release-2026', key: { data: RELEASE_PEM } }, [
      keyedSignature(ecKeyPair()),
      keyedSignature(),
    ]);
    expect(check).toMatchObject({
      passed: true,
      static: false,
      signer: { type: 'key', name: 'release-2026' },
      counts: { found: 2, verified: 1 },
      rejected: [{ error: { code: 'SIGNATURE_MISMATCH' } }],
    });
  });

  it('report keyless signers by issuer and subject', async () => {
    const payload = simpleSigningPayload();
    const signature = signBytes(signer, payload);
    const entry = await logEntry(infra.tlog, hashedRekordBody(payload, signature, signer.certificatePem));
    const artifact = legacySignature(payload, signature, {
      certificatePem: signer.certificatePem,
      set: setAnnotation(entry),
    });
    const check = await checkOne(
      { keyless: { identities: [{ issuer: GITHUB_ISSUER, subject: WORKFLOW }] } },
      [artifact],
    );
    expect(check).toMatchObject({
      passed: true,
      signer: { type: 'keyless', issuer: GITHUB_ISSUER, subject: WORKFLOW },
    });
  });

  it('say when nothing was found', async () => {
    const check = await checkOne({ key: { data: RELEASE_PEM } }, []);
    expect(check).toMatchObject({
      passed: false,
      failure: { code: 'NO_SIGNATURES', reason: 'no signature found', kind: 'policy' },
    });
  });

  it('class a denial as infrastructure when nothing could even be parsed', async () => {
    const broken = { ...keyedSignature(), annotations: { 'dev.cosignproject.cosign/signature': '!!' } };
    const check = await checkOne({ key: { data: RELEASE_PEM } }, [broken, broken]);
    expect(check).toMatchObject({
      passed: false,
      failure: { kind: 'infrastructure', code: 'NO_VALID_SIGNATURE' },
    });
    // the same reason twice is told once
    if (!check.passed) expect(check.failure.cause).toBeInstanceOf(Error);
    if (!check.passed) expect(check.failure.cause).not.toBeInstanceOf(AggregateError);
  });

  it('cap the reasons listed', async () => {
    const artifacts = [
      keyedSignature(ecKeyPair()),
      { ...keyedSignature(), annotations: {} },
      keyedSignature(release, simpleSigningPayload(`sha256:${'1'.repeat(64)}`)),
      keyedSignature(release, Buffer.from('{}')),
      { ...keyedSignature(), annotations: { 'dev.cosignproject.cosign/signature': '!!' } },
    ];
    const check = await checkOne({ name: 'k', key: { data: RELEASE_PEM } }, artifacts);
    expect(!check.passed && check.failure.reason).toBe('no valid signature: 5 found, 0 verified');
    const cause = !check.passed ? check.failure.cause : undefined;
    expect(cause).toBeInstanceOf(AggregateError);
    expect((cause as AggregateError).errors).toHaveLength(4);
    expect(describeCause(cause)).toMatch(/; 2 more reasons not shown$/);
  });

  it('consider only the artifacts of its signature format, and of both without one', async () => {
    const bundle = bundleArtifact(await dsseBundle(release, statement(COSIGN_SIGN_PREDICATE_TYPE, {}), []));
    const legacy = await checkOne({ key: { data: RELEASE_PEM }, signatureFormat: 'legacy' }, [bundle]);
    expect(legacy).toMatchObject({ passed: false, counts: { found: 0 } });
    const bundled = await checkOne({ key: { data: RELEASE_PEM }, signatureFormat: 'bundle' }, [
      bundle,
      keyedSignature(),
    ]);
    expect(bundled).toMatchObject({ passed: true, counts: { found: 1, verified: 1 } });
    const either = await checkOne({ key: { data: RELEASE_PEM } }, [bundle, keyedSignature()]);
    expect(either).toMatchObject({ passed: true, counts: { found: 2, verified: 2 } });
  });

  it('not count attestation bundles as signatures', async () => {
    const attestation = await dsseBundle(release, statement(SLSA, {}), []);
    const announced = await checkOne({ key: { data: RELEASE_PEM }, signatureFormat: 'bundle' }, [
      bundleArtifact(attestation, SLSA),
    ]);
    expect(announced).toMatchObject({ passed: false, failure: { code: 'NO_SIGNATURES' } });
    const unannounced = await checkOne({ key: { data: RELEASE_PEM }, signatureFormat: 'bundle' }, [
      bundleArtifact(attestation),
    ]);
    expect(unannounced).toMatchObject({
      passed: false,
      rejected: [{ error: { code: 'PREDICATE_TYPE_MISMATCH' } }],
    });
  });

  it('fail static and unavailable authorities with their reasons', async () => {
    expect(await checkOne({ static: { action: 'fail', message: 'frozen' } }, [])).toMatchObject({
      passed: false,
      failure: { code: 'STATIC_FAIL', reason: 'disallowed by static policy: frozen', kind: 'policy' },
    });
    expect(await checkOne({ static: { action: 'fail' } }, [])).toMatchObject({
      failure: { reason: 'disallowed by static policy' },
    });
    expect(await checkOne({ static: { action: 'pass' } }, [])).toMatchObject({
      passed: true,
      static: true,
      signer: undefined,
    });
    const unavailable = await checkOne({ key: { secretRef: { name: 'gone' } } }, [keyedSignature()]);
    expect(unavailable).toMatchObject({
      passed: false,
      failure: {
        code: 'SECRET_UNAVAILABLE',
        kind: 'infrastructure',
        reason: 'Secret cosign-system/gone not found',
      },
    });
  });
});

describe('attestation authorities', () => {
  const att = (predicate: unknown, type = SLSA) =>
    legacyAttestation(dsseEnvelope(release, statement(type, predicate)));
  const authority = (policy?: string, predicateType = 'slsaprovenance') => ({
    name: 'provenance',
    key: { data: RELEASE_PEM },
    attestations: [
      { name: 'built-by-ci', predicateType, ...(policy ? { policy: { type: 'cel', data: policy } } : {}) },
    ],
  });

  it('say each reason once: what an engine failure lies on is the cause, its message only the reason', async () => {
    const compiled = await compile([authority('true')]);
    const [first] = compiled.authorities;
    if (first?.type !== 'key') throw new Error('unreachable');
    let calls = 0;
    const failing = (thrown: () => unknown) => ({
      ...first,
      attestations: first.attestations.map((a) => ({
        ...a,
        policy: {
          language: 'rego' as const,
          source: 'package x',
          engine: {
            evaluate: async () => {
              calls++;
              throw thrown();
            },
          },
        },
      })),
    });
    const oom = () =>
      new Error('the policy engine stopped', { cause: new Error(`worker ran out of memory ${calls}`) });
    const one = await verifyAuthority(failing(oom) as never, DIGEST, [att({})]);
    expect(one).toMatchObject({
      passed: false,
      failure: { code: 'POLICY_ENGINE_FAILED', kind: 'infrastructure' },
    });
    const line = !one.passed ? `${one.failure.reason} (${describeCause(one.failure.cause)})` : '';
    expect(line.split('the policy engine stopped')).toHaveLength(2);
    expect(line).toContain('worker ran out of memory 1');
    const two = await verifyAuthority(failing(oom) as never, DIGEST, [att({}), att({ b: 1 })]);
    expect(!two.passed && two.failure.cause).toBeInstanceOf(AggregateError);
    const many = await verifyAuthority(
      failing(() => new Error(`stopped ${calls}`, { cause: 'plain text' })) as never,
      DIGEST,
      [att({}), att({ b: 1 }), att({ b: 2 }), att({ b: 3 })],
    );
    expect(!many.passed && many.failure.reason).toMatch(/; 1 more\)$/);
    expect(!many.passed && many.failure.cause).toBe('plain text');
    const bare = await verifyAuthority(failing(() => 'a string') as never, DIGEST, [att({})]);
    expect(!bare.passed && bare.failure).toMatchObject({ reason: expect.stringContaining('a string') });
    expect(!bare.passed && bare.failure.cause).toBeUndefined();
  });

  it('pass when a verified attestation of the type satisfies the CEL policy', async () => {
    const check = await checkOne(
      authority(
        'predicate.builder.id == "ci" && predicateType == "https://slsa.dev/provenance/v0.2" && signer.type == "key"',
      ),
      [att({ builder: { id: 'other' } }), att({ builder: { id: 'ci' } })],
    );
    expect(check).toMatchObject({
      passed: true,
      counts: { found: 2, verified: 2 },
      signer: { name: 'provenance' },
    });
    expect(check.passed && check.attestations['built-by-ci']).toHaveLength(1);
  });

  it('see subject and statement in CEL', async () => {
    const check = await checkOne(
      authority(
        `subject.exists(s, s.digest.sha256 == "${DIGEST.slice(7)}") && statement._type.startsWith("https://in-toto.io/")`,
      ),
      [att({})],
    );
    expect(check.passed).toBe(true);
  });

  it('fail when the CEL policy is false or cannot be evaluated', async () => {
    const falsy = await checkOne(authority('predicate.builder.id == "ci"'), [
      att({ builder: { id: 'other' } }),
    ]);
    expect(falsy).toMatchObject({
      passed: false,
      failure: {
        code: 'ATTESTATION_POLICY_FAILED',
        kind: 'policy',
        reason: `attestation "built-by-ci" policy failed for all 1 of type ${SLSA} (${REPO}:sha256-aaaa.att: CEL policy returned false)`,
      },
    });
    const missing = await checkOne(authority('predicate.builder.id == "ci"'), [
      att({}),
      att({ builder: {} }),
    ]);
    expect(!missing.passed && missing.failure.reason).toContain('CEL evaluation failed');
    // Each run's reason is said once: the cause holds only what lies beneath it.
    expect(!falsy.passed && falsy.failure.cause).toBeUndefined();
    expect(!missing.passed && missing.failure.cause).toBeUndefined();
    const notBool = await checkOne(authority('"yes"'), [att({})]);
    expect(!notBool.passed && notBool.failure.reason).toContain('CEL policy returned "yes", not a bool');
  });

  it('fail when no verified attestation has the wanted type, listing the types seen', async () => {
    const check = await checkOne(authority(undefined, 'cyclonedx'), [att({})]);
    expect(check).toMatchObject({
      passed: false,
      failure: {
        code: 'NO_MATCHING_ATTESTATION',
        reason: `no verified attestation of type "cyclonedx" (https://cyclonedx.org/bom) for "built-by-ci": 1 verified, of types ${SLSA}`,
      },
    });
  });

  it('say "attestation" in counts and ignore .sig layers', async () => {
    const check = await checkOne(authority(), [
      keyedSignature(),
      legacyAttestation(dsseEnvelope(ecKeyPair(), statement(SLSA, {}))),
    ]);
    expect(check).toMatchObject({
      passed: false,
      failure: {
        reason: 'no valid attestation: 1 found, 0 verified',
      },
    });
  });

  it('say which predicate types they wanted when they find no attestation at all, and where they looked', async () => {
    const check = await checkOne(authority(), [keyedSignature()]);
    expect(!check.passed && check.failure.reason).toBe(`no attestation found (wanted: ${SLSA})`);
    const [legacyOnly] = (await compile([{ ...authority(), signatureFormat: 'legacy' }])).authorities;
    if (legacyOnly === undefined || legacyOnly.type === 'static') throw new Error('unreachable');
    const hinted = await verifyAuthority(legacyOnly, DIGEST, [], [{ format: bundleFormat, count: 2 }]);
    expect(!hinted.passed && hinted.failure.reason).toBe(
      `no attestation found (wanted: ${SLSA}) in the legacy .sig/.att tags (signatureFormat: legacy); the image has 2 Sigstore bundles (what cosign 3 writes by default), which this authority does not read`,
    );
  });

  it('consider every bundle of a bundle-format attestation authority', async () => {
    const bundle = bundleArtifact(await dsseBundle(release, statement(SLSA, { ok: true }), []), SLSA);
    const check = await checkOne({ ...authority('predicate.ok'), signatureFormat: 'bundle' }, [bundle]);
    expect(check).toMatchObject({ passed: true });
  });
});

describe('policies', () => {
  it('pass when any authority passes, and keep every authority result', async () => {
    const compiled = await compile([
      { name: 'a', key: { data: publicPem(ecKeyPair()) } },
      { name: 'b', key: { data: RELEASE_PEM } },
    ]);
    const result = await verifyPolicy(compiled, DIGEST, () => [keyedSignature()]);
    expect(result).toMatchObject({ policy: 'release', passed: true, authority: 'b' });
    expect(result.authorities.map((a) => a.passed)).toEqual([false, true]);
  });

  it('fail with every authority failure when none passes', async () => {
    const compiled = await compile([
      { name: 'a', key: { data: publicPem(ecKeyPair()) } },
      { name: 'b', static: { action: 'fail' } },
    ]);
    const result = await verifyPolicy(compiled, DIGEST, () => [keyedSignature()]);
    expect(result).toMatchObject({
      passed: false,
      failure: { kind: 'policy', reason: 'none of 2 authorities passed' },
    });
  });

  it('evaluate the spec-level CEL policy over authorityMatches and the inputs it asks for', async () => {
    const compiled = await compile(
      [
        { name: 'signed', key: { data: RELEASE_PEM } },
        { name: 'always', static: { action: 'pass' } },
      ],
      {
        policy: {
          type: 'cel',
          data: 'authorityMatches.signed.signatures[0].key == "signed" && authorityMatches.always.static && spec.replicas == 2.0 && metadata == null',
          includeSpec: true,
        },
      },
    );
    const passed = await verifyPolicy(compiled, DIGEST, () => [keyedSignature()], {
      spec: { replicas: 2 },
      metadata: { name: 'x' },
    });
    expect(passed).toMatchObject({ passed: true });
    const failed = await verifyPolicy(compiled, DIGEST, () => [keyedSignature()], { spec: { replicas: 3 } });
    expect(failed).toMatchObject({
      passed: false,
      failure: {
        code: 'POLICY_FAILED',
        reason: 'spec.policy failed: CEL policy returned false',
        kind: 'policy',
      },
    });
    expect(failed.authorities).toHaveLength(2);
  });

  it('expose keyless signers and attestations to the spec-level policy', async () => {
    const payload = simpleSigningPayload();
    const signature = signBytes(signer, payload);
    const entry = await logEntry(infra.tlog, hashedRekordBody(payload, signature, signer.certificatePem));
    const keyless = legacySignature(payload, signature, {
      certificatePem: signer.certificatePem,
      set: setAnnotation(entry),
    });
    const compiled = await compile(
      [
        { name: 'ci', keyless: { identities: [{ issuer: GITHUB_ISSUER, subject: WORKFLOW }] } },
        {
          name: 'prov',
          key: { data: RELEASE_PEM },
          attestations: [{ name: 'slsa', predicateType: 'slsaprovenance' }],
        },
      ],
      {
        policy: {
          type: 'cel',
          data: `authorityMatches.ci.signatures[0].subject == "${WORKFLOW}" && authorityMatches.prov.attestations.slsa[0].predicateType == "${SLSA}" && spec == null`,
        },
      },
    );
    const artifacts = (authority: { name: string }) =>
      authority.name === 'ci' ? [keyless] : [legacyAttestation(dsseEnvelope(release, statement(SLSA, {})))];
    expect(await verifyPolicy(compiled, DIGEST, artifacts, { spec: { ignored: true } })).toMatchObject({
      passed: true,
    });
  });

  it('bind every spec-level input, null unless asked for and given', async () => {
    const compiled = await compile(
      [
        { name: 'bad', key: { data: publicPem(ecKeyPair()) } },
        { name: 'good', key: { data: RELEASE_PEM } },
      ],
      {
        policy: {
          type: 'cel',
          data: '!("bad" in authorityMatches) && spec == null && metadata.name == "m" && typemeta.kind == "Pod" && config == null',
          includeSpec: true,
          includeObjectMeta: true,
          includeTypeMeta: true,
          fetchConfigFile: true,
        },
      },
    );
    const result = await verifyPolicy(compiled, DIGEST, () => [keyedSignature()], {
      metadata: { name: 'm' },
      typemeta: { kind: 'Pod' },
    });
    expect(result).toMatchObject({ passed: true, authority: 'good' });
  });

  it('skip the spec-level policy when no authority passed', async () => {
    const compiled = await compile([{ key: { data: RELEASE_PEM } }], {
      policy: { type: 'cel', data: 'true' },
    });
    expect(await verifyPolicy(compiled, DIGEST, () => [])).toMatchObject({
      passed: false,
      failure: { reason: 'no signature found' },
    });
  });

  it('produce results core accepts as they are', async () => {
    const compiled = await compile([{ key: { data: RELEASE_PEM } }]);
    const result: PolicyCheck = await verifyPolicy(compiled, DIGEST, () => [keyedSignature()]);
    const verdict: PolicyResult = result;
    const authorities: readonly AuthorityResult[] = result.authorities;
    expect(verdict.passed && authorities.length).toBe(1);
  });
});

describe('discovery requests', () => {
  it('ask the registry layer for what each authority considers, per source', async () => {
    const compiled = await compile([
      {
        name: 'sig',
        key: { data: RELEASE_PEM },
        source: [{ oci: 'registry.example/sigs', tagPrefix: 'x-' }],
      },
      { name: 'att', key: { data: RELEASE_PEM }, attestations: [{ name: 'a', predicateType: 'vuln' }] },
      { name: 'bundle', key: { data: RELEASE_PEM }, signatureFormat: 'bundle' },
      { name: 'static', static: { action: 'pass' } },
    ]);
    const image = { registry: 'registry.example', repository: 'acme/app', digest: DIGEST };
    const [sig, att, bundle, none] = compiled.authorities.map((a) => discoveryRequests(a, image));
    const signatureRepository = { registry: 'registry.example', repository: 'sigs' };
    const referrers = {
      kind: 'referrers',
      artifactType: { startsWith: 'application/vnd.dev.sigstore.bundle' },
      confirmedAs: 'Sigstore bundle',
      layers: { pick: 'one', mediaTypePrefix: 'application/vnd.dev.sigstore.bundle', name: 'bundle' },
    };
    const annotation = 'dev.sigstore.bundle.predicateType';
    const signatureBundles = {
      ...referrers,
      skipListed: { annotation, differsFrom: COSIGN_SIGN_PREDICATE_TYPE },
    };
    // Without signatureFormat: the legacy tag, then the bundle referrers (read only when the tag holds nothing that passes).
    expect(sig).toEqual([
      {
        image,
        signatureRepository,
        tagPrefix: 'x-',
        query: {
          kind: 'digest-tag',
          suffix: 'sig',
          mediaType: 'application/vnd.dev.cosign.simplesigning.v1+json',
        },
      },
      { image, signatureRepository, tagPrefix: 'x-', query: signatureBundles },
    ]);
    expect(att).toEqual([
      {
        image,
        query: { kind: 'digest-tag', suffix: 'att', mediaType: 'application/vnd.dsse.envelope.v1+json' },
      },
      {
        image,
        query: { ...referrers, skipListed: { annotation, equals: COSIGN_SIGN_PREDICATE_TYPE } },
      },
    ]);
    expect(bundle).toEqual([{ image, query: signatureBundles }]);
    expect(none).toEqual([]);
  });
});

describe('unexpected failures', () => {
  it('turn a thrown non-Signet error into an infrastructure denial with its cause', async () => {
    const compiled = await compile([{ key: { data: RELEASE_PEM } }]);
    const [authority] = compiled.authorities;
    if (authority?.type !== 'key' || authority.state.kind !== 'ready') throw new Error('unreachable');
    const { check: ready } = authority.state;
    const exploding = {
      ...authority,
      state: { kind: 'ready', check: { ...ready, signer: { ...ready.signer, keys: null } } },
    } as never;
    const check = await verifyAuthority(exploding, DIGEST, [keyedSignature()]);
    expect(check).toMatchObject({
      passed: false,
      failure: { kind: 'infrastructure' },
      rejected: [{ error: { code: 'VERIFIER_ERROR' } }],
    });
    expect(!check.passed && describeCause(check.failure.cause)).toContain(
      'unexpected error while verifying: Cannot read properties of null',
    );
  });
});

describe('ca-cert keyless authorities', () => {
  it('trust the given CA as the certificate authority of a synthetic root', async () => {
    // The stranger's CA first: corp's log then integrates after the stranger's certificate was issued.
    const strangerCA = await makeInfra({ sct: false });
    const corp = await makeInfra({ sct: false });
    const caPem = `-----BEGIN CERTIFICATE-----\n${Buffer.from(corp.ca.rootCertificate.buffer).toString('base64')}\n-----END CERTIFICATE-----\n`;
    const compiled = await compileAuthorities(
      clusterImagePolicy([
        {
          name: 'corp-ca',
          keyless: {
            'ca-cert': { data: caPem },
            identities: [{ issuer: GITHUB_ISSUER, subject: WORKFLOW }],
            insecureIgnoreSCT: true,
          },
          ctlog: { trustRootRef: 'mock' },
        },
      ]),
      { trustRoots: trustRootResolver([corp.trustRoot]) },
    );
    const [authority] = compiled.authorities;
    if (authority === undefined) throw new Error('unreachable');
    const sign = async (key: CertifiedKey) => {
      const payload = simpleSigningPayload();
      const signature = signBytes(key, payload);
      const entry = await logEntry(corp.tlog, hashedRekordBody(payload, signature, key.certificatePem));
      return legacySignature(payload, signature, {
        certificatePem: key.certificatePem,
        set: setAnnotation(entry),
      });
    };
    expect(await verifyAuthority(authority, DIGEST, [await sign(await certify(corp.ca))])).toMatchObject({
      passed: true,
      signer: { subject: WORKFLOW },
    });
    const stranger = await certify(strangerCA.ca);
    const rejected = await verifyAuthority(authority, DIGEST, [await sign(stranger)]);
    expect(rejected).toMatchObject({
      passed: false,
      rejected: [
        {
          error: {
            code: 'CERTIFICATE_ERROR',
            cause: { cause: { message: 'no valid certificate path found' } },
          },
        },
      ],
    });
  });
});

describe('bundles for keyless authorities end to end', () => {
  it('pass a keyless DSSE bundle', async () => {
    const bundle = bundleArtifact(
      await dsseBundle(signer, statement(COSIGN_SIGN_PREDICATE_TYPE, {}), [rekorWitness(infra.tlog)]),
      COSIGN_SIGN_PREDICATE_TYPE,
    );
    const check = await checkOne(
      {
        keyless: { identities: [{ issuer: GITHUB_ISSUER, subjectRegExp: 'https://github\\.com/acme/.*' }] },
        signatureFormat: 'bundle',
      },
      [bundle],
    );
    expect(check).toMatchObject({ passed: true, signer: { subject: WORKFLOW } });
  });
});

describe('what the other format holds', () => {
  it('says how many signatures or attestations the image has in the format the authority does not read', async () => {
    const [authority] = (await compile([{ key: { data: RELEASE_PEM }, signatureFormat: 'legacy' }]))
      .authorities;
    if (authority === undefined || authority.type === 'static') throw new Error('unreachable');
    const reason = async (elsewhere: readonly OtherFormat[]) => {
      const check = await verifyAuthority(authority, DIGEST, [], elsewhere);
      return check.passed ? '' : check.failure.reason;
    };
    expect(await reason([])).toBe('no signature found');
    expect(await reason([{ format: bundleFormat, count: 2 }])).toBe(
      'no signature found in the legacy .sig/.att tags (signatureFormat: legacy); the image has 2 Sigstore bundles (what cosign 3 writes by default), which this authority does not read',
    );
    expect(consideredCount(authority, [keyedSignature()], authority.otherFormats)).toBe(0);
    expect(consideredCount(authority, [keyedSignature()])).toBe(1);
  });

  it('names the default formats as the reason when the deployment restricts them, not the policy', async () => {
    const formats = SIGNATURE_FORMATS.withDefaults(['bundle']);
    const compiled = await compileAuthorities(clusterImagePolicy([{ key: { data: RELEASE_PEM } }]), {
      formats,
    });
    const [authority] = compiled.authorities;
    if (authority === undefined || authority.type === 'static') throw new Error('unreachable');
    expect(authority).toMatchObject({
      formats: [bundleFormat],
      otherFormats: [legacyFormat],
      signatureFormat: undefined,
    });
    const check = await verifyAuthority(authority, DIGEST, [], [{ format: legacyFormat, count: 3 }]);
    expect(!check.passed && check.failure.reason).toBe(
      'no signature found as a Sigstore bundle (the default signature format); the image has 3 legacy signatures (the .sig/.att tags), which this authority does not read',
    );
    const both = (await compile([{ key: { data: RELEASE_PEM } }])).authorities[0];
    expect(both).toMatchObject({ formats: [legacyFormat, bundleFormat], otherFormats: [] });
    // With a third format registered, an authority without signatureFormat reads the two defaults.
    const toy = { ...legacyFormat, name: 'toy', found: () => '1 toy signature' };
    const withToy = await compileAuthorities(clusterImagePolicy([{ key: { data: RELEASE_PEM } }]), {
      formats: SIGNATURE_FORMATS.with(toy),
    });
    const [reading] = withToy.authorities;
    if (reading === undefined || reading.type === 'static') throw new Error('unreachable');
    const hinted = await verifyAuthority(reading, DIGEST, [], [{ format: toy, count: 1 }]);
    expect(!hinted.passed && hinted.failure.reason).toBe(
      'no signature found in the legacy .sig/.att tags or as a Sigstore bundle (the default signature formats); the image has 1 toy signature',
    );
  });
});
