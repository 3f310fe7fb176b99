// Policy fingerprints (issue 24): the revision of a policy's passes and the key of its verification
// records. Real compiles of real policy YAML; the same objects give the same fingerprint in every
// compile (another replica, a restart), what a policy read changes it, and nothing else does.
import { generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import type { KmsKeySource, LivingTrustRoot } from '@signet/verifier';
import { SIGNATURE_FORMATS, trustRootFromJSON } from '@signet/verifier';
import { describe, expect, it } from 'vitest';
import { parsePolicyYaml } from '../../src/policy/policy-file.js';
import type { PolicyObjects } from '../../src/policy/policy-objects.js';
import { type CompileOptions, compileSnapshot } from '../../src/policy/policy-store.js';

const pem = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .publicKey.export({ format: 'pem', type: 'spki' })
    .toString();
const KEY = pem();
const OTHER_KEY = pem();
const b64 = (text: string) => Buffer.from(text).toString('base64');

function yaml({ teamKey = KEY, tls = 'cert-1', keyOrder = false, annotation = '' } = {}) {
  const images = keyOrder ? '{ glob: "registry.example/**" }' : '{ glob: "registry.example/**" }';
  const authorities = keyOrder
    ? '[{ key: { secretRef: { name: team-key } }, name: team }]'
    : '[{ name: team, key: { secretRef: { name: team-key } } }]';
  return `apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: by-secret, uid: u-1${annotation === '' ? '' : `, annotations: { signet.dev/stale-if-error: "${annotation}" }`} }
spec:
  ${keyOrder ? `authorities: ${authorities}\n  images: [${images}]` : `images: [${images}]\n  authorities: ${authorities}`}
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: by-kms, uid: u-2 }
spec:
  images: [{ glob: "registry.example/**" }]
  authorities: [{ name: kms, key: { kms: "awskms:///arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab" } }]
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: keyless, uid: u-3 }
spec:
  images: [{ glob: "registry.example/**" }]
  authorities: [{ name: ci, keyless: { identities: [{ issuer: "https://issuer.example", subject: "ci@example.com" }] } }]
---
apiVersion: v1
kind: Secret
metadata: { name: team-key, namespace: signet-system }
data: { cosign.pub: ${b64(teamKey)} }
---
apiVersion: v1
kind: Secret
metadata: { name: signet-webhook-tls, namespace: signet-system }
data: { tls.crt: ${b64(tls)} }
`;
}

/** The KMS key store's answer for every URI (the store itself, and real KMS servers, are tested in @signet/kms). */
function kms(keyPem: string): KmsKeySource {
  return {
    lookup: async () => ({ kind: 'ready', key: { pem: keyPem }, fetchedAt: new Date(), stale: undefined }),
  };
}

function publicGood(): unknown {
  const require = createRequire(import.meta.resolve('@signet/verifier'));
  const seeds = require('@sigstore/tuf/seeds.json') as Record<string, { targets: Record<string, string> }>;
  const seed = Object.values(seeds)[0]?.targets['trusted_root.json'] ?? '';
  return JSON.parse(Buffer.from(seed, 'base64').toString('utf8'));
}

/** The default root as `--tuf-mirror` keeps it: here a fixed TrustedRoot (rotated = one CT log fewer). */
function defaultRoot(rotated = false): LivingTrustRoot {
  const document = publicGood() as { ctlogs: unknown[] };
  if (rotated) document.ctlogs = document.ctlogs.slice(1);
  const current = trustRootFromJSON(document, { name: 'public-good' });
  return { name: 'public-good', current, lastError: undefined } as unknown as LivingTrustRoot;
}

async function fingerprints(
  objects: PolicyObjects,
  options: Partial<CompileOptions> = {},
): Promise<Record<string, string>> {
  const { snapshot } = await compileSnapshot(objects, {
    namespace: 'signet-system',
    kmsKeys: kms(KEY),
    defaultRoot: defaultRoot(),
    signetVersion: '1.2.3',
    ...options,
  });
  const policies = snapshot?.policySet.policies ?? [];
  expect(policies.map((p) => p.broken)).toEqual([undefined, undefined, undefined]);
  return Object.fromEntries(policies.map((p) => [p.name, p.compiled.revision]));
}

const objects = (options?: Parameters<typeof yaml>[0]) => parsePolicyYaml(yaml(options), 'signet-system');

describe('policy fingerprints', () => {
  it('are the same in every compile of the same objects (another replica, a restart)', async () => {
    const first = await fingerprints(objects());
    const second = await fingerprints(objects(), { kmsKeys: kms(KEY), defaultRoot: defaultRoot() });
    expect(second).toEqual(first);
    for (const fingerprint of Object.values(first)) expect(fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('ignore what the policy does not read: another Secret (the TLS Secret rotating), key order, annotations', async () => {
    const before = await fingerprints(objects());
    expect(await fingerprints(objects({ tls: 'cert-2' }))).toEqual(before);
    expect(await fingerprints(objects({ keyOrder: true }))).toEqual(before);
    expect(await fingerprints(objects({ annotation: '1h' }))).toEqual(before);
  });

  it("change with what the policy read: its Secret's key, a KMS key, the trust root; only for that policy", async () => {
    const before = await fingerprints(objects());
    const rotatedSecret = await fingerprints(objects({ teamKey: OTHER_KEY }));
    expect(rotatedSecret['by-secret']).not.toBe(before['by-secret']);
    expect({ ...rotatedSecret, 'by-secret': '' }).toEqual({ ...before, 'by-secret': '' });

    const rotatedKms = await fingerprints(objects(), { kmsKeys: kms(OTHER_KEY) });
    expect(rotatedKms['by-kms']).not.toBe(before['by-kms']);
    expect({ ...rotatedKms, 'by-kms': '' }).toEqual({ ...before, 'by-kms': '' });

    const rotatedRoot = await fingerprints(objects(), { defaultRoot: defaultRoot(true) });
    expect(rotatedRoot.keyless).not.toBe(before.keyless);
    expect({ ...rotatedRoot, keyless: '' }).toEqual({ ...before, keyless: '' });

    // Undone, the fingerprint is the one before: passes verified then are valid again.
    expect(await fingerprints(objects({ teamKey: KEY }))).toEqual(before);
  });

  it("change with the policy's spec, its uid and Signet's version", async () => {
    const before = await fingerprints(objects());
    const otherVersion = await fingerprints(objects(), { signetVersion: '1.2.4' });
    for (const name of Object.keys(before)) expect(otherVersion[name]).not.toBe(before[name]);
    const recreated = parsePolicyYaml(yaml().replace('uid: u-1', 'uid: u-9'), 'signet-system');
    expect((await fingerprints(recreated))['by-secret']).not.toBe(before['by-secret']);
    const edited = parsePolicyYaml(
      yaml().replaceAll('registry.example/**', 'registry.example/team/**'),
      'signet-system',
    );
    const after = await fingerprints(edited);
    for (const name of Object.keys(before)) expect(after[name]).not.toBe(before[name]);
  });

  it("change with what the policy requires without a spec change: Signet's annotations, the default signature formats", async () => {
    const before = await fingerprints(objects());
    // `signet.dev/index-signatures` changes what passes; `signet.dev/stale-if-error` (above) does not.
    const indexed = parsePolicyYaml(
      yaml().replace(
        'name: by-kms, uid: u-2',
        'name: by-kms, uid: u-2, annotations: { signet.dev/index-signatures: platforms }',
      ),
      'signet-system',
    );
    const annotated = await fingerprints(indexed);
    expect(annotated['by-kms']).not.toBe(before['by-kms']);
    expect({ ...annotated, 'by-kms': '' }).toEqual({ ...before, 'by-kms': '' });
    // `--signature-format-default=legacy`: every authority without `signatureFormat` reads less.
    const legacy = await fingerprints(objects(), { formats: SIGNATURE_FORMATS.withDefaults(['legacy']) });
    for (const name of Object.keys(before)) expect(legacy[name]).not.toBe(before[name]);
    const same = await fingerprints(objects(), {
      formats: SIGNATURE_FORMATS.withDefaults(SIGNATURE_FORMATS.defaults),
    });
    expect(same).toEqual(before);
  });
});
