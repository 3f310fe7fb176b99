// policy-controller's private-Sigstore policies (keyless.url / ctlog.url naming an in-cluster
// Fulcio and Rekor, no TrustRoot), read from its v0.15.1 module in the module cache, verified as
// upstream verifies them: Fulcio roots, CT log and Rekor keys come from the TUF root the webhook
// is started with (--tuf-mirror/--tuf-root), never from the URLs themselves.
//
// What stands in: no Fulcio or Rekor can run here (Rekor needs Trillian and a database, Fulcio an
// OIDC issuer), so the private Sigstore is @sigstore/mock's CA, CT log and transparency log (real
// certificates, SCTs and signed entry timestamps), and its trust root is published in a real TUF
// repository made by python-tuf and served on loopback. The signatures are cosign's legacy `.sig`
// layers with that material, for the identity policy-controller's e2e tests sign with (a
// Kubernetes service account's OIDC token).
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseClusterImagePolicy } from '@signet/k8s-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { compileAuthorities } from '../../src/policy/compile.js';
import { verifyPolicy } from '../../src/policy/verify-policy.js';
import { trustRootResolver } from '../../src/trust/compile.js';
import type { LivingTrustRoot } from '../../src/trust/living-root.js';
import { livingPublicGoodRoot } from '../../src/trust/public-good.js';
import {
  certify,
  DIGEST,
  ecKeyPair,
  hashedRekordBody,
  type Infra,
  legacySignature,
  logEntry,
  makeInfra,
  publicPem,
  setAnnotation,
  signBytes,
  simpleSigningPayload,
} from '../support/fixtures.js';
import { loadTestbed, type Testbed } from '../support/registry-helpers.js';

const SETUP_TIMEOUT = 15 * 60_000;
const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const SUBJECT = 'https://kubernetes.io/namespaces/default/serviceaccounts/default';

interface PolicyDocument {
  readonly file: string;
  readonly body: { spec: { authorities: Record<string, unknown>[] } } & Record<string, unknown>;
}

/** Policies naming a Fulcio or Rekor by URL for a keyless authority, and no TrustRoot. */
async function privateSigstorePolicies(root: string): Promise<PolicyDocument[]> {
  const found: PolicyDocument[] = [];
  for (const dir of [
    'test/testdata/policy-controller/e2e',
    'test/testdata/policy-controller/valid',
    'examples/policies',
  ]) {
    for (const name of (await readdir(join(root, dir))).filter((n) => n.endsWith('.yaml')).sort()) {
      for (const document of parseAllDocuments(await readFile(join(root, dir, name), 'utf8'))) {
        const body = document.toJS() as PolicyDocument['body'] | null;
        if (body?.kind !== 'ClusterImagePolicy') continue;
        const text = JSON.stringify(body);
        const byUrl = body.spec.authorities.some(
          (a) =>
            typeof (a.keyless as { url?: unknown } | undefined)?.url === 'string' ||
            (a.key !== undefined && typeof (a.ctlog as { url?: unknown } | undefined)?.url === 'string'),
        );
        if (byUrl && !text.includes('trustRootRef')) found.push({ file: `${dir}/${name}`, body });
      }
    }
  }
  return found;
}

describe("policy-controller's private-Sigstore policies, trust from --tuf-mirror/--tuf-root", () => {
  let dir = '';
  let mirror: Testbed.TufMirror;
  let privateSigstore: Infra;
  let other: Infra;
  let policies: PolicyDocument[] = [];
  let defaultRoot: LivingTrustRoot;

  beforeAll(async () => {
    const testbed = await loadTestbed();
    dir = await mkdtemp(join(tmpdir(), 'signet-private-sigstore-'));
    privateSigstore = await makeInfra();
    other = await makeInfra();
    const repository = await testbed.TufRepository.create(join(dir, 'tuf'), {
      'trusted_root.json': Buffer.from(JSON.stringify(privateSigstore.trustedRootJSON)),
    });
    mirror = await new testbed.TufMirror(join(dir, 'tuf')).start();
    // As `signet serve --tuf-mirror <mirror> --tuf-root root.json`.
    defaultRoot = await livingPublicGoodRoot({ mirror: mirror.url, root: await repository.initialRoot() });
    expect(await defaultRoot.refresh()).toBe(true);
    policies = await privateSigstorePolicies(await testbed.policyControllerModule());
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await mirror?.stop();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  /** A signature by the policy's own identity (exact issuer and subject), else the e2e tests' one. */
  async function signature(services: Infra, identity?: { issuer?: string; subject?: string }) {
    const exact = identity?.issuer !== undefined && identity.subject !== undefined;
    const key = await certify(services.ca, {
      san: (exact ? identity.subject : undefined) ?? SUBJECT,
      issuer: (exact ? identity.issuer : undefined) ?? ISSUER,
    });
    const payload = simpleSigningPayload(DIGEST);
    const signed = signBytes(key, payload);
    const entry = await logEntry(services.tlog, hashedRekordBody(payload, signed, key.certificatePem));
    return legacySignature(payload, signed, {
      certificatePem: key.certificatePem,
      set: setAnnotation(entry),
    });
  }

  /** Each keyless authority alone (attestations and CUE/Rego policies are the other issues' part). */
  function keylessAuthorities(document: PolicyDocument) {
    return document.body.spec.authorities
      .filter((authority) => authority.keyless !== undefined)
      .map((authority) => {
        const { attestations: _, ...signatureOnly } = authority;
        const { policy: __, ...spec } = document.body.spec as Record<string, unknown>;
        return parseClusterImagePolicy({ ...document.body, spec: { ...spec, authorities: [signatureOnly] } });
      });
  }

  it('finds the private-Sigstore policies in the module', () => {
    expect(policies.map((p) => p.file)).toEqual(
      expect.arrayContaining([
        'test/testdata/policy-controller/e2e/cip-keyless.yaml',
        'test/testdata/policy-controller/e2e/cip-keyless-with-identities.yaml',
      ]),
    );
    expect(policies.length).toBeGreaterThanOrEqual(10);
  });

  it('verifies every keyless authority against the private Sigstore published through TUF, refusing others', async () => {
    let checked = 0;
    for (const document of policies) {
      for (const cip of keylessAuthorities(document)) {
        const compiled = await compileAuthorities(cip, {
          trustRoots: trustRootResolver([], { defaultRoot }),
        });
        const where = `${document.file} ${JSON.stringify(cip.spec.authorities[0]?.keyless?.identities)}`;
        const identity = cip.spec.authorities[0]?.keyless?.identities[0];
        const good = await signature(privateSigstore, identity);
        const foreign = await signature(other, identity);
        // cip-keyless-with-identities-mismatch wants another namespace's service account: refused.
        const expected = !document.file.endsWith('-mismatch.yaml');
        expect((await verifyPolicy(compiled, DIGEST, () => [good])).passed, where).toBe(expected);
        expect((await verifyPolicy(compiled, DIGEST, () => [foreign])).passed, where).toBe(false);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  });

  it('verifies the key authorities whose Rekor is named by ctlog.url against the private log', async () => {
    // policy-controller's e2e scripts sign with a key they generate and put its public key in the
    // policy (data) or in the Secret it names: the same here.
    const key = ecKeyPair();
    const pem = publicPem(key);
    let checked = 0;
    for (const document of policies) {
      for (const [index, authority] of document.body.spec.authorities.entries()) {
        const ctlog = authority.ctlog as { url?: string } | undefined;
        const keyRef = authority.key as { data?: string; kms?: string; hashAlgorithm?: string } | undefined;
        // KMS keys with ctlog.url (the AWS and GCP examples) are @signet/kms's tests.
        if (keyRef === undefined || keyRef.kms !== undefined || ctlog?.url === undefined) continue;
        const { attestations: _, ...signatureOnly } = authority;
        const withKey =
          keyRef.data === undefined ? signatureOnly : { ...signatureOnly, key: { ...keyRef, data: pem } };
        const { policy: __, ...spec } = document.body.spec as Record<string, unknown>;
        const cip = parseClusterImagePolicy({ ...document.body, spec: { ...spec, authorities: [withKey] } });
        const lookupSecret = () => ({ 'cosign.pub': Buffer.from(pem) });
        const hash = keyRef.hashAlgorithm ?? 'sha256';
        const payload = simpleSigningPayload(DIGEST);
        const signed = signBytes(key, payload, hash);
        const logged = async (services: Infra) =>
          legacySignature(payload, signed, {
            set: setAnnotation(await logEntry(services.tlog, hashedRekordBody(payload, signed, pem))),
          });
        const where = `${document.file} authorities[${index}]`;
        const privateRoot = await compileAuthorities(cip, {
          trustRoots: trustRootResolver([], { defaultRoot }),
          lookupSecret,
        });
        const ours = await logged(privateSigstore);
        const foreign = await logged(other);
        expect((await verifyPolicy(privateRoot, DIGEST, () => [ours])).passed, where).toBe(true);
        expect((await verifyPolicy(privateRoot, DIGEST, () => [foreign])).passed, where).toBe(false);
        const publicGood = await compileAuthorities(cip, { trustRoots: trustRootResolver([]), lookupSecret });
        expect((await verifyPolicy(publicGood, DIGEST, () => [ours])).passed, where).toBe(false);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(8);
  });

  it('does not verify them with the embedded public-good root: the URLs confer no trust', async () => {
    const good = await signature(privateSigstore);
    const document = policies.find((p) => p.file.endsWith('/cip-keyless.yaml'));
    const [cip] = keylessAuthorities(document as PolicyDocument);
    const compiled = await compileAuthorities(cip as never, { trustRoots: trustRootResolver([]) });
    const check = await verifyPolicy(compiled, DIGEST, () => [good]);
    expect(check.passed).toBe(false);
  });
});
