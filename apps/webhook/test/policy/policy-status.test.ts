// The status each ClusterImagePolicy and TrustRoot should carry, from real compiles of real policy
// YAML (keys made here). Writing it through the /status subresource, with the Lease, is tested
// against a real API server in e2e/test/policy-status.test.ts.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parsePolicyYaml } from '../../src/policy/policy-file.js';
import { AUTHORITIES_ANNOTATION, desiredStatuses, statusUpdate } from '../../src/policy/policy-status.js';
import { compileSnapshot } from '../../src/policy/policy-store.js';

const publicKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .publicKey.export({ format: 'pem', type: 'spki' })
  .toString();
const indented = publicKey.trim().split('\n').join('\n          ');

const YAML = `apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: signed, generation: 3 }
spec:
  images: [{ glob: "registry.example/**" }]
  authorities:
    - name: release
      key:
        data: |
          ${indented}
    - name: allow-tests
      static: { action: pass }
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: bad-key, generation: 1 }
spec:
  images: [{ glob: "**" }]
  authorities: [{ key: { data: "not a key" } }]
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: warns, generation: 2 }
spec:
  mode: warn
  images: [{ glob: "**" }]
  authorities: [{ key: { data: "not a key" } }]
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: secret-missing, generation: 5 }
spec:
  images: [{ glob: "**" }]
  authorities: [{ name: team, key: { secretRef: { name: team-key } } }]
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: unreadable, generation: 7 }
spec:
  images: [{ glob: "**" }]
  authorities: [{ static: { action: maybe } }]
---
apiVersion: policy.sigstore.dev/v1alpha1
kind: TrustRoot
metadata: { name: broken-root, generation: 4 }
spec:
  sigstoreKeys:
    tLogs: [{ baseURL: "https://rekor.example", hashAlgorithm: sha256, publicKey: "bm90IGEga2V5" }]
---
apiVersion: policy.sigstore.dev/v1alpha1
kind: TrustRoot
metadata: { name: unparsable-root, generation: 9 }
spec: { sigstoreKeys: "a string" }
`;

async function statuses() {
  const { snapshot } = await compileSnapshot(parsePolicyYaml(YAML, 'signet-system'), {
    namespace: 'signet-system',
  });
  if (snapshot === undefined) throw new Error('no snapshot');
  return new Map(desiredStatuses(snapshot).map((s) => [`${s.kind}/${s.name}`, s]));
}

describe('desiredStatuses', () => {
  it('a policy that compiled is Ready and names its authorities, at the generation compiled', async () => {
    const signed = (await statuses()).get('ClusterImagePolicy/signed');
    expect(signed).toMatchObject({
      generation: 3,
      condition: {
        type: 'Ready',
        status: 'True',
        reason: 'Compiled',
        message: 'compiled, enforce: 2 authorities (release: key, allow-tests: static pass)',
      },
      annotations: { [AUTHORITIES_ANNOTATION]: 'release: key, allow-tests: static pass' },
    });
  });

  it('a policy that cannot compile is not Ready: Invalid with the compile error and what that means', async () => {
    const all = await statuses();
    const bad = all.get('ClusterImagePolicy/bad-key');
    expect(bad?.condition).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(bad?.condition.message).toMatch(/^ClusterImagePolicy "bad-key": spec\.authorities\[0\]\.key/);
    expect(bad?.condition.message).toMatch(/; it denies every image it matches until fixed$/);
    expect(bad?.annotations).toEqual({});
    expect(all.get('ClusterImagePolicy/warns')?.condition.message).toMatch(
      /it warns about every image it matches until fixed$/,
    );
  });

  it('one that does not parse is Unreadable; one whose Secret is missing has an AuthorityUnavailable', async () => {
    const all = await statuses();
    const unreadable = all.get('ClusterImagePolicy/unreadable');
    expect(unreadable).toMatchObject({ generation: 7, condition: { status: 'False', reason: 'Unreadable' } });
    expect(unreadable?.condition.message).toContain('cannot be parsed');
    expect(unreadable?.condition.message).toContain('spec.authorities[0].static.action');
    const missing = all.get('ClusterImagePolicy/secret-missing');
    expect(missing).toMatchObject({
      generation: 5,
      condition: { status: 'False', reason: 'AuthorityUnavailable' },
    });
    expect(missing?.condition.message).toContain('authority team: Secret signet-system/team-key not found');
  });

  it('TrustRoots: one whose keys do not load is Invalid, one that does not parse says so', async () => {
    const all = await statuses();
    const broken = all.get('TrustRoot/broken-root');
    expect(broken).toMatchObject({ generation: 4, condition: { status: 'False', reason: 'Invalid' } });
    expect(broken?.condition.message).toContain('TrustRoot "broken-root"');
    const unparsable = all.get('TrustRoot/unparsable-root');
    expect(unparsable).toMatchObject({ generation: 9, condition: { status: 'False', reason: 'Invalid' } });
    expect(unparsable?.condition.message).toContain('cannot be parsed');
  });
});

describe('statusUpdate', () => {
  const desired = {
    kind: 'ClusterImagePolicy' as const,
    name: 'p',
    generation: 2,
    condition: { type: 'Ready' as const, status: 'True' as const, reason: 'Compiled', message: 'compiled' },
    annotations: { [AUTHORITIES_ANNOTATION]: 'a: key' },
  };
  const now = new Date('2026-01-02T03:04:05.678Z');

  it('writes the whole status the first time, replacing policy-controller conditions', () => {
    const upstream = {
      observedGeneration: 2,
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' },
        { type: 'KeysInlined', status: 'True' },
      ],
    };
    expect(statusUpdate(upstream, desired, now)).toEqual({
      observedGeneration: 2,
      conditions: [{ ...desired.condition, lastTransitionTime: '2025-01-01T00:00:00Z' }],
      annotations: desired.annotations,
    });
    expect(statusUpdate(undefined, desired, now)).toMatchObject({
      conditions: [{ lastTransitionTime: '2026-01-02T03:04:05Z' }],
    });
  });

  it('writes nothing when the stored status says the same, and moves the transition time only when the status flips', () => {
    const written = statusUpdate(undefined, desired, now);
    expect(statusUpdate(written, desired, new Date('2026-02-01T00:00:00Z'))).toBeUndefined();
    const newMessage = statusUpdate(
      written,
      { ...desired, condition: { ...desired.condition, message: 'm2' } },
      now,
    );
    expect(newMessage).toMatchObject({ conditions: [{ lastTransitionTime: '2026-01-02T03:04:05Z' }] });
    const flipped = statusUpdate(
      written,
      { ...desired, condition: { ...desired.condition, status: 'False', reason: 'Invalid' } },
      new Date('2026-03-01T00:00:00Z'),
    );
    expect(flipped).toMatchObject({
      conditions: [{ status: 'False', lastTransitionTime: '2026-03-01T00:00:00Z' }],
    });
    expect(statusUpdate(written, { ...desired, generation: 3 }, now)).toMatchObject({
      observedGeneration: 3,
    });
  });
});
