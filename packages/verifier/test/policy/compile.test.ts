import { beforeAll, describe, expect, it } from 'vitest';
import { type CompiledAuthority, compileAuthorities, requirementsOf } from '../../src/policy/compile.js';
import { PolicyCompileError } from '../../src/policy/errors.js';
import { compileCertificates } from '../../src/policy/keys.js';
import { KmsKeyStore } from '../../src/policy/kms-keys.js';
import { runProgram } from '../../src/policy/programs.js';
import { trustRootResolver } from '../../src/trust/compile.js';
import { trustRootFromJSON } from '../../src/trust/trusted-root.js';
import {
  ecKeyPair,
  GITHUB_ISSUER,
  type Infra,
  makeInfra,
  publicPem,
  trustedRootDocument,
} from '../support/fixtures.js';
import { clusterImagePolicy } from '../support/policies.js';

const KEY_PEM = publicPem(ecKeyPair());
const keyless = { identities: [{ issuer: GITHUB_ISSUER, subjectRegExp: '.*' }] };

let infra: Infra;
beforeAll(async () => {
  infra = await makeInfra();
});

const resolver = () => trustRootResolver([], { publicGood: infra.trustRoot });

async function compileOne(authority: Record<string, unknown>, context = {}): Promise<CompiledAuthority> {
  const compiled = await compileAuthorities(clusterImagePolicy([authority]), {
    trustRoots: resolver(),
    ...context,
  });
  const [first] = compiled.authorities;
  if (first === undefined) throw new Error('no authority');
  return first;
}

async function compileError(
  authority: Record<string, unknown>,
  spec: Record<string, unknown> = {},
  context = {},
): Promise<PolicyCompileError> {
  try {
    await compileAuthorities(clusterImagePolicy([authority], spec), { trustRoots: resolver(), ...context });
  } catch (error) {
    if (error instanceof PolicyCompileError) return error;
    throw error;
  }
  throw new Error('expected a PolicyCompileError');
}

describe('policies Signet refuses at compile time', () => {
  it('refuse a CUE attestation policy without the policy engines, naming the policy, authority and attestation', async () => {
    const error = await compileError({
      name: 'ci',
      keyless,
      attestations: [
        {
          name: 'provenance',
          predicateType: 'slsaprovenance',
          policy: { type: 'cue', data: 'predicate: {}' },
        },
      ],
    });
    expect(error.code).toBe('UNSUPPORTED_POLICY_TYPE');
    expect(error.message).toBe(
      'ClusterImagePolicy "release": spec.authorities[0].attestations[0].policy (authority "ci", attestation "provenance"): cue policies need the policy engines (@signet/policy-engines), which this verifier was not given',
    );
    expect(error).toMatchObject({ policy: 'release', path: 'spec.authorities[0].attestations[0].policy' });
  });

  it('refuse a Rego spec-level policy without the engines, and a policy type upstream does not know', async () => {
    const error = await compileError(
      { key: { data: KEY_PEM } },
      { policy: { type: 'rego', data: 'package sigstore' } },
    );
    expect(error.code).toBe('UNSUPPORTED_POLICY_TYPE');
    expect(error.message).toContain(
      'ClusterImagePolicy "release": spec.policy (policy of the ClusterImagePolicy): rego policies need the policy engines',
    );
    const wasm = await compileError({ key: { data: KEY_PEM } }, { policy: { type: 'wasm', data: 'x' } });
    expect(wasm.message).toContain(
      'spec.policy.type (policy of the ClusterImagePolicy): policy type "wasm" is not supported: only [cue,rego] (and Signet\'s cel) are',
    );
  });

  it("refuse a secretRef to a namespace other than the webhook's, as policy-controller does", async () => {
    const error = await compileError({ key: { secretRef: { name: 'k', namespace: 'other' } } });
    expect(error.code).toBe('INVALID_AUTHORITY');
    expect(error.path).toBe('spec.authorities[0].key.secretRef.namespace');
    expect(error.message).toContain('must be the webhook\'s namespace "cosign-system"');
  });

  it('never read certificates from a KMS (the compiler ignores a kms ca-cert: test/policy/keyless-ca-cert-kms.test.ts)', () => {
    const site = { policy: 'p', path: 'spec.authorities[0].keyless.ca-cert', label: 'l', authority: 'a' };
    expect(() =>
      compileCertificates({ kms: 'hashivault://ca' }, site, {
        lookupSecret: undefined,
        secretNamespace: 'ns',
      }),
    ).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_KMS' }));
  });

  it('refuse KMS keys when no KMS key source is configured (a KMS ca-cert is test/policy/keyless-ca-cert-kms.test.ts)', async () => {
    const error = await compileError({ key: { kms: 'hashivault://release' } });
    expect(error.code).toBe('UNSUPPORTED_KMS');
    expect(error.message).toContain(
      'spec.authorities[0].key.kms (authority "authority-0"): no KMS key source is configured',
    );
  });

  it('refuse keys, certificates, expressions and sources that do not parse', async () => {
    expect((await compileError({ key: { data: 'not pem' } })).code).toBe('INVALID_KEY');
    const certPem = `-----BEGIN CERTIFICATE-----\n${Buffer.from(infra.ca.rootCertificate.buffer).toString('base64')}\n-----END CERTIFICATE-----\n`;
    expect((await compileError({ key: { data: certPem } })).code).toBe('INVALID_KEY');
    expect((await compileError({ keyless: { ...keyless, 'ca-cert': { data: KEY_PEM } } })).code).toBe(
      'INVALID_CERTIFICATE',
    );
    expect(
      (await compileError({ keyless: { identities: [{ issuer: 'x', subjectRegExp: '(' }] } })).code,
    ).toBe('INVALID_REGEXP');
    const cel = await compileError({
      keyless,
      attestations: [{ name: 'a', predicateType: 'x', policy: { type: 'cel', data: 'predicate.' } }],
    });
    expect(cel.code).toBe('INVALID_CEL');
    expect(cel.message).toContain('CEL does not parse: <input>:1:10: found . but expecting end of input');
    expect((await compileError({ key: { data: KEY_PEM }, source: [{ oci: 'Not A Repo!' }] })).code).toBe(
      'INVALID_SOURCE',
    );
    expect(
      (await compileError({ key: { data: KEY_PEM }, source: [{ oci: 'registry.example/sigs:v1' }] })).message,
    ).toContain('must name a repository, without tag or digest');
  });

  it('refuse remote policies and configMapRef without a lookup, and policies with no or several sources', async () => {
    const remote = await compileError({
      keyless,
      attestations: [
        { name: 'a', predicateType: 'x', policy: { type: 'cel', remote: { url: 'https://x' } } },
      ],
    });
    expect(remote.code).toBe('UNSUPPORTED_POLICY_SOURCE');
    const configMap = { type: 'cel', configMapRef: { name: 'policies', key: 'release' } };
    expect(
      (await compileError({ keyless, attestations: [{ name: 'a', predicateType: 'x', policy: configMap }] }))
        .message,
    ).toContain('configMapRef policies need a ConfigMap lookup');
    expect(
      (
        await compileError({
          keyless,
          attestations: [{ name: 'a', predicateType: 'x', policy: { type: 'cel' } }],
        })
      ).message,
    ).toContain('expected exactly one, got neither: data, configMapRef, remote');
    const both = { type: 'cel', data: 'true', configMapRef: { name: 'p', key: 'k' } };
    expect(
      (await compileError({ keyless, attestations: [{ name: 'a', predicateType: 'x', policy: both }] }))
        .message,
    ).toContain('expected exactly one, got several: data, configMapRef');
  });
});

describe('compiled authorities', () => {
  it('name authorities as upstream defaults them and freeze the result', async () => {
    const compiled = await compileAuthorities(
      clusterImagePolicy([{ key: { data: KEY_PEM } }, { name: 'b', static: { action: 'pass' } }]),
      {
        trustRoots: resolver(),
      },
    );
    expect(compiled.authorities.map((a) => a.name)).toEqual(['authority-0', 'b']);
    expect(compiled).toMatchObject({ policy: 'release', specPolicy: undefined });
    expect(Object.isFrozen(compiled)).toBe(true);
    expect(Object.isFrozen(compiled.authorities[0])).toBe(true);
  });

  it('carry the revision of their passes: the context says it once the compile has read everything, else each compile is its own', async () => {
    const cip = clusterImagePolicy([{ key: { secretRef: { name: 'keys' } } }]);
    const read: string[] = [];
    const lookupSecret = (namespace: string, name: string) => {
      read.push(`${namespace}/${name}`);
      return { 'cosign.pub': Buffer.from(KEY_PEM) };
    };
    const revision = () => `release:${read.join(',')}`;
    expect((await compileAuthorities(cip, { lookupSecret, revision })).revision).toBe(
      'release:cosign-system/keys',
    );
    const [first, second] = [await compileAuthorities(cip), await compileAuthorities(cip)];
    expect(first.revision).toMatch(/^release@/);
    expect(first.revision).not.toBe(second.revision);
  });

  it('read every PEM key inline and every entry of a Secret', async () => {
    const two = `${publicPem(ecKeyPair())}${publicPem(ecKeyPair())}`;
    const inline = await compileOne({ name: 'release-2026', key: { data: two, hashAlgorithm: 'sha384' } });
    expect(inline.type === 'key' && inline.state.kind === 'ready' && inline.state.check.signer).toMatchObject(
      {
        type: 'key',
        hashAlgorithm: 'sha384',
        keys: [{ name: 'release-2026#1' }, { name: 'release-2026#2' }],
      },
    );
    const lookups: string[] = [];
    const lookupSecret = (namespace: string, name: string) => {
      lookups.push(`${namespace}/${name}`);
      return { 'b.pub': Buffer.from(two), 'a.pub': Buffer.from(KEY_PEM) };
    };
    const fromSecret = await compileOne(
      { key: { secretRef: { name: 'keys' } } },
      { lookupSecret, systemNamespace: 'signet' },
    );
    expect(lookups).toEqual(['signet/keys']);
    expect(
      fromSecret.type === 'key' &&
        fromSecret.state.kind === 'ready' &&
        fromSecret.state.check.signer.type === 'key' &&
        fromSecret.state.check.signer.keys.map((k) => k.name),
    ).toEqual(['keys/a.pub', 'keys/b.pub#1', 'keys/b.pub#2']);
    expect(
      (
        await compileError(
          { key: { secretRef: { name: 'keys' } } },
          {},
          { lookupSecret: () => ({ k: Buffer.from('junk') }) },
        )
      ).code,
    ).toBe('INVALID_KEY');
  });

  it('leave an authority whose Secret is missing unavailable, without failing the policy', async () => {
    const missing = await compileOne(
      { key: { secretRef: { name: 'gone', namespace: 'ns' } } },
      { lookupSecret: () => undefined, systemNamespace: 'ns' },
    );
    expect(missing).toMatchObject({
      type: 'key',
      state: {
        kind: 'unavailable',
        reason: { code: 'SECRET_UNAVAILABLE', message: 'Secret ns/gone not found' },
      },
    });
    const empty = await compileOne(
      { keyless: { ...keyless, 'ca-cert': { secretRef: { name: 'ca' } } } },
      { lookupSecret: () => ({}) },
    );
    expect(empty).toMatchObject({
      state: {
        kind: 'unavailable',
        reason: { code: 'SECRET_UNAVAILABLE', message: 'Secret cosign-system/ca holds no data' },
      },
    });
  });

  it('leave an authority whose trust root is missing or incomplete unavailable', async () => {
    const unknown = await compileOne({ keyless: { ...keyless, trustRootRef: 'private' } });
    expect(unknown).toMatchObject({
      state: {
        kind: 'unavailable',
        reason: {
          code: 'TRUST_ROOT_UNAVAILABLE',
          kind: 'infrastructure',
          cause: { code: 'TRUST_ROOT_NOT_FOUND' },
        },
      },
    });
    const caOnly = trustRootFromJSON(trustedRootDocument({ ca: infra.ca }), { name: 'ca-only' });
    const trustRoots = trustRootResolver([caOnly], { publicGood: infra.trustRoot });
    const compile = (authority: Record<string, unknown>) => compileOne(authority, { trustRoots });
    expect(
      (await compile({ keyless: { ...keyless, trustRootRef: 'ca-only' } })).type === 'keyless' &&
        (await compile({ keyless: { ...keyless, trustRootRef: 'ca-only' } })),
    ).toMatchObject({
      state: {
        kind: 'unavailable',
        reason: {
          message:
            'TrustRoot "ca-only" has no CT logs, and the authority requires an SCT (set insecureIgnoreSCT to skip)',
        },
      },
    });
    expect(
      await compile({ keyless: { ...keyless, trustRootRef: 'ca-only', insecureIgnoreSCT: true } }),
    ).toMatchObject({
      state: {
        kind: 'unavailable',
        reason: {
          message:
            'TrustRoot "ca-only" has no transparency logs, and the authority requires a log entry (to rely on RFC 3161 timestamps instead, set rfc3161timestamp)',
        },
      },
    });
    expect(
      await compile({ key: { data: KEY_PEM }, rfc3161timestamp: { trustRootRef: 'ca-only' } }),
    ).toMatchObject({
      state: {
        kind: 'unavailable',
        reason: {
          message:
            'TrustRoot "ca-only" has no timestamp authorities, and the authority requires an RFC 3161 timestamp',
        },
      },
    });
    const empty = trustRootFromJSON(trustedRootDocument({ tlog: infra.tlog }), { name: 'no-ca' });
    expect(
      await compileOne(
        { keyless: { ...keyless, trustRootRef: 'no-ca' } },
        { trustRoots: trustRootResolver([empty]) },
      ),
    ).toMatchObject({
      state: {
        kind: 'unavailable',
        reason: {
          message:
            'TrustRoot "no-ca" has no certificate authorities, and the authority requires a certificate (keyless)',
        },
      },
    });
  });

  it('keep signature sources for the registry layer', async () => {
    const compiled = await compileOne({
      key: { data: KEY_PEM },
      source: [
        {
          oci: 'docker.io/acme/signatures',
          tagPrefix: 'v1-',
          signaturePullSecrets: [{ name: 'pull' }, { name: '' }],
        },
      ],
    });
    expect(compiled.sources).toEqual([
      {
        signatureRepository: { registry: 'index.docker.io', repository: 'acme/signatures' },
        tagPrefix: 'v1-',
        signaturePullSecrets: ['pull'],
      },
    ]);
    const empty = await compileOne({ key: { data: KEY_PEM }, source: [{}] });
    expect(empty.sources).toEqual([
      { signatureRepository: undefined, tagPrefix: undefined, signaturePullSecrets: [] },
    ]);
  });

  it('compile attestations with cosign short predicate type names', async () => {
    const compiled = await compileOne({
      keyless,
      attestations: [
        { name: 'a', predicateType: 'slsaprovenance' },
        { name: 'b', predicateType: 'spdxjson' },
        { name: 'c', predicateType: 'https://example.com/custom/v1', policy: { type: 'cel', data: 'true' } },
      ],
    });
    expect(compiled.attestations.map((a) => a.predicateType)).toEqual([
      'https://slsa.dev/provenance/v0.2',
      'https://spdx.dev/Document',
      'https://example.com/custom/v1',
    ]);
    expect(compiled.attestations[2]?.policy?.source).toBe('true');
  });

  it('read CEL from a ConfigMap through the injected lookup', async () => {
    const lookupConfigMap = (namespace: string, name: string) =>
      namespace === 'ns' && name === 'p' ? { rule: 'predicate.ok' } : undefined;
    const policy = (ref: Record<string, unknown>) => ({
      keyless,
      attestations: [{ name: 'a', predicateType: 'x', policy: { type: 'cel', configMapRef: ref } }],
    });
    const compiled = await compileOne(policy({ name: 'p', namespace: 'ns', key: 'rule' }), {
      lookupConfigMap,
    });
    expect(compiled.attestations[0]?.policy?.source).toBe('predicate.ok');
    expect(
      (await compileError(policy({ name: 'q', namespace: 'ns', key: 'rule' }), {}, { lookupConfigMap }))
        .message,
    ).toContain('ConfigMap ns/q not found');
    expect(
      (await compileError(policy({ name: 'p', namespace: 'ns', key: 'other' }), {}, { lookupConfigMap }))
        .message,
    ).toContain('has no key "other"');
    const system = await compileOne(policy({ name: 'p', key: 'rule' }), {
      lookupConfigMap,
      systemNamespace: 'ns',
    });
    expect(system.attestations[0]?.policy?.source).toBe('predicate.ok');
    const asked: string[] = [];
    const recording = (namespace: string, name: string) => {
      asked.push(`${namespace}/${name}`);
      return { k: 'true' };
    };
    const defaulted = await compileOne(policy({ name: 'p', key: 'k' }), { lookupConfigMap: recording });
    expect(defaulted.attestations[0]?.policy?.source).toBe('true');
    expect(asked).toEqual(['cosign-system/p']);
    // Upstream's validation: both name and key are required.
    const noKey = await compileError(policy({ name: 'p', namespace: 'ns' }), {}, { lookupConfigMap });
    expect(noKey.message).toContain(
      'configMapRef.key (authority "authority-0", attestation "a"): missing field',
    );
    const noName = await compileError(policy({ key: 'k' }), {}, { lookupConfigMap });
    expect(noName.message).toContain(
      'configMapRef.name (authority "authority-0", attestation "a"): missing field',
    );
  });

  it('compile the spec-level policy and what it asks for', async () => {
    const compiled = await compileAuthorities(
      clusterImagePolicy([{ key: { data: KEY_PEM } }], {
        mode: 'warn',
        policy: { type: 'cel', data: 'true', includeSpec: true, fetchConfigFile: true },
      }),
      { trustRoots: resolver() },
    );
    expect(compiled.specPolicy).toMatchObject({
      includeSpec: true,
      includeObjectMeta: false,
      includeTypeMeta: false,
      fetchConfigFile: true,
    });
  });

  it('refuse an authority no parser would have produced', async () => {
    const cip = clusterImagePolicy([{ static: { action: 'pass' } }]);
    const broken = { ...cip, spec: { ...cip.spec, authorities: [{ name: 'x' }] } };
    await expect(compileAuthorities(broken, { trustRoots: resolver() })).rejects.toMatchObject({
      code: 'INVALID_AUTHORITY',
    });
    const noSource = { ...cip, spec: { ...cip.spec, authorities: [{ key: {} }] } };
    await expect(compileAuthorities(noSource, { trustRoots: resolver() })).rejects.toMatchObject({
      code: 'INVALID_AUTHORITY',
    });
    const noIdentity = {
      ...cip,
      spec: { ...cip.spec, authorities: [{ keyless: { identities: [{ issuer: 'x' }] } }] },
    };
    await expect(compileAuthorities(noIdentity, { trustRoots: resolver() })).rejects.toMatchObject({
      code: 'INVALID_AUTHORITY',
    });
  });

  it('let errors other than trust-root errors through', async () => {
    const broken = async () => {
      throw new RangeError('resolver bug');
    };
    await expect(
      compileAuthorities(clusterImagePolicy([{ keyless }]), { trustRoots: broken }),
    ).rejects.toThrow(RangeError);
  });

  it('use the embedded public-good trust root by default', async () => {
    const compiled = await compileAuthorities(clusterImagePolicy([{ keyless }]));
    const [authority] = compiled.authorities;
    expect(
      authority?.type === 'keyless' &&
        authority.state.kind === 'ready' &&
        authority.state.check.trust.certificateAuthorities.length,
    ).toBeGreaterThan(0);
  });
});

// Apply-time validation compiles what a caller sent: an offline compile does no network I/O for
// it. What would be fetched is checked for form only, and never fetched (issue 21).
describe('offline compiles', () => {
  const KMS =
    'awskms://127.0.0.1:9/arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
  const fetched: string[] = [];
  const store = new KmsKeyStore({
    fetcher: async (uri) => {
      fetched.push(uri);
      return { pem: KEY_PEM };
    },
    checkUri: (uri) => {
      if (!uri.startsWith('awskms://'))
        throw new Error(`KMS URI ${JSON.stringify(uri)} names no supported provider`);
    },
  });

  it('check a KMS key URI for form, and fetch nothing', async () => {
    const offline = await compileOne({ key: { kms: KMS } }, { kmsKeys: store, offline: true });
    expect(offline).toMatchObject({
      type: 'key',
      state: {
        kind: 'unavailable',
        reason: {
          code: 'NOT_FETCHED',
          kind: 'infrastructure',
          message: expect.stringContaining('checked for form only'),
        },
      },
    });
    const bad = await compileError(
      { key: { kms: 'gcpkms://nowhere' } },
      {},
      { kmsKeys: store, offline: true },
    );
    expect(bad.code).toBe('UNSUPPORTED_KMS');
    expect(bad.message).toBe(
      'ClusterImagePolicy "release": spec.authorities[0].key.kms (authority "authority-0"): KMS URI "gcpkms://nowhere" names no supported provider',
    );
    // A store told no form checks any URI; offline, it still fetches nothing.
    const lax = new KmsKeyStore({ fetcher: async () => ({ pem: KEY_PEM }) });
    expect(
      await compileOne({ key: { kms: 'gcpkms://nowhere' } }, { kmsKeys: lax, offline: true }),
    ).toMatchObject({
      state: { reason: { code: 'NOT_FETCHED' } },
    });
    expect(fetched).toEqual([]);
    // Online, the same policy fetches the key.
    expect(await compileOne({ key: { kms: KMS } }, { kmsKeys: store })).toMatchObject({
      state: { kind: 'ready' },
    });
    expect(fetched).toEqual([KMS]);
  });

  it('check a remote policy for form, fetch nothing, and never judge with it', async () => {
    const fetch = async () => {
      throw new Error('fetched');
    };
    const remote = (url: string) => ({
      name: 'a',
      predicateType: 'custom',
      policy: { type: 'cel', remote: { url, sha256sum: 'a'.repeat(64) } },
    });
    const compiled = await compileOne(
      { key: { data: KEY_PEM }, attestations: [remote('https://127.0.0.1:9/policy.rego')] },
      { offline: true, fetchRemotePolicy: fetch },
    );
    const program = compiled.attestations[0]?.policy;
    expect(program).toEqual({ source: '', language: 'cel', notFetched: 'https://127.0.0.1:9/policy.rego' });
    expect(await runProgram(program as never, 'a', { cel: () => ({}), document: () => ({}) })).toEqual({
      passed: false,
      reason: 'the remote policy https://127.0.0.1:9/policy.rego was checked for form only and never fetched',
      infrastructure: true,
    });
    const plain = await compileError(
      { key: { data: KEY_PEM }, attestations: [remote('http://127.0.0.1:9/policy.rego')] },
      {},
      { offline: true, fetchRemotePolicy: fetch },
    );
    expect(plain.message).toContain('a host and the https scheme are expected');
  });

  it('check a remote TrustRoot for form, and contact no mirror', async () => {
    const contacted: string[] = [];
    const root = Buffer.from(JSON.stringify({ signed: { _type: 'root', version: 1 } })).toString('base64');
    const trustRoot = (name: string, mirror: string, initial = root) => ({
      apiVersion: 'policy.sigstore.dev/v1alpha1',
      kind: 'TrustRoot',
      metadata: { name },
      spec: { remote: { mirror, root: initial } },
    });
    const trustRoots = trustRootResolver(
      [
        trustRoot('mirror', 'https://127.0.0.1:9/tuf'),
        trustRoot('not-a-url', 'ftp://127.0.0.1/tuf'),
        trustRoot('no-url', 'mirror'),
        trustRoot('bad-root', 'https://127.0.0.1:9/tuf', 'bm90IGpzb24='),
      ] as never,
      {
        offline: true,
        tufClient: async (request) => {
          contacted.push(request.mirror);
          throw new Error('contacted');
        },
      },
    );
    const compile = (ref: string) =>
      compileOne({ keyless: { ...keyless, trustRootRef: ref } }, { trustRoots, offline: true });
    expect(await compile('mirror')).toMatchObject({
      state: {
        kind: 'unavailable',
        reason: {
          code: 'NOT_FETCHED',
          message:
            'TrustRoot "mirror": checked for form only; its mirror https://127.0.0.1:9/tuf is contacted when the TrustRoot is loaded',
        },
      },
    });
    await expect(trustRoots('not-a-url')).rejects.toMatchObject({
      code: 'TRUST_ROOT_INVALID',
      message: 'TrustRoot "not-a-url": mirror "ftp://127.0.0.1/tuf" is not an http(s) URL',
    });
    await expect(trustRoots('no-url')).rejects.toMatchObject({ code: 'TRUST_ROOT_INVALID' });
    await expect(trustRoots('bad-root')).rejects.toMatchObject({ code: 'TRUST_ROOT_INVALID' });
    expect(contacted).toEqual([]);
  });

  it('refuse CEL its host could not compile as an engine failure', async () => {
    const down = {
      compile: async () => {
        throw new Error('the CEL workers are closed');
      },
    };
    const error = await compileError(
      { static: { action: 'pass' } },
      { policy: { type: 'cel', data: 'true' } },
      { cel: down },
    );
    expect(error.code).toBe('POLICY_ENGINE_FAILED');
    expect(error.problem).toBe('the CEL host failed: the CEL workers are closed');
  });
});

describe('the threshold rules', () => {
  const rules = (authority: Record<string, unknown>) =>
    requirementsOf(clusterImagePolicy([authority]).spec.authorities[0] as never);
  it('require for a key authority only what ctlog and rfc3161timestamp ask for', () => {
    expect(rules({ key: { data: KEY_PEM } })).toEqual({ tlog: false, timestampAuthority: false, sct: false });
    expect(rules({ key: { data: KEY_PEM }, ctlog: {} })).toEqual({
      tlog: true,
      timestampAuthority: false,
      sct: false,
    });
    expect(rules({ key: { data: KEY_PEM }, rfc3161timestamp: {} })).toEqual({
      tlog: false,
      timestampAuthority: true,
      sct: false,
    });
  });

  it('require for keyless an SCT and a log entry, or a TSA timestamp instead (also with ctlog, as upstream)', () => {
    expect(rules({ keyless })).toEqual({ tlog: true, timestampAuthority: false, sct: true });
    expect(rules({ keyless: { ...keyless, insecureIgnoreSCT: true } })).toEqual({
      tlog: true,
      timestampAuthority: false,
      sct: false,
    });
    expect(rules({ keyless, rfc3161timestamp: {} })).toEqual({
      tlog: false,
      timestampAuthority: true,
      sct: true,
    });
    expect(rules({ keyless, rfc3161timestamp: {}, ctlog: {} })).toEqual({
      tlog: false,
      timestampAuthority: true,
      sct: true,
    });
    expect(rules({ key: { data: KEY_PEM }, rfc3161timestamp: {}, ctlog: {} })).toEqual({
      tlog: false,
      timestampAuthority: true,
      sct: false,
    });
  });
});
