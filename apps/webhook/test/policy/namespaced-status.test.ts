// The status each ImagePolicy and ImagePolicyException should carry, from real compiles of policy
// YAML at a given time: an exception's condition changes with time alone (Active, then Expired),
// and the writer is told when. Writing it through /status with the Lease, and the timer, run
// against a real API server in e2e/test/namespaced-cluster.test.ts.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fingerprintOf } from '../../src/audit/background-scanner.js';
import { namespacedStatuses, nextExceptionExpiry } from '../../src/policy/namespaced-status.js';
import { parsePolicyYaml } from '../../src/policy/policy-file.js';
import { statusUpdate } from '../../src/policy/policy-status.js';
import { compileSnapshot } from '../../src/policy/policy-store.js';

const PEM = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .publicKey.export({ format: 'pem', type: 'spki' })
  .toString();
const NOW = Date.parse('2026-12-10T12:00:00Z');
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');

function exception(
  name: string,
  created: number,
  expires: number,
  glob = 'registry.example/team-a/**',
): string {
  return `apiVersion: policy.signet.dev/v1alpha1
kind: ImagePolicyException
metadata: { name: ${name}, namespace: team-a, generation: 3, creationTimestamp: "${iso(created)}" }
spec:
  images: [{ glob: "${glob}" }]
  policies: [{ kind: ImagePolicy, name: ci }, { kind: ClusterImagePolicy, name: release }]
  reason: INC-1
  expires: "${iso(expires)}"
`;
}

const YAML = [
  `apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: release, generation: 1 }
spec:
  images: [{ glob: "registry.example/**" }]
  authorities: [{ name: release, key: { data: ${JSON.stringify(PEM)} } }]
`,
  `apiVersion: policy.signet.dev/v1alpha1
kind: ImagePolicy
metadata: { name: ci, namespace: team-a, generation: 2 }
spec:
  images: [{ glob: "registry.example/team-a/**" }]
  authorities: [{ name: team-key, key: { data: ${JSON.stringify(PEM)} } }]
`,
  `apiVersion: policy.signet.dev/v1alpha1
kind: ImagePolicy
metadata: { name: bad-key, namespace: team-b, generation: 5 }
spec:
  images: [{ glob: "**" }]
  authorities: [{ key: { data: "not a key" } }]
`,
  `apiVersion: policy.signet.dev/v1alpha1
kind: ImagePolicy
metadata: { name: loose, namespace: team-b, generation: 1 }
spec:
  images: [{ glob: "**" }]
  authorities: [{ static: { action: pass } }]
`,
  exception('hotfix', NOW - HOUR, NOW + 2 * HOUR),
  exception('sooner', NOW - HOUR, NOW + HOUR),
  exception('yesterday', NOW - 25 * HOUR, NOW - HOUR),
  exception('forever', NOW - 40 * 24 * HOUR, NOW + HOUR),
  exception('bad-glob', NOW, NOW + HOUR, 'registry.example/[abc]'),
  `apiVersion: policy.signet.dev/v1alpha1
kind: ImagePolicyException
metadata: { name: no-reason, namespace: team-a, generation: 1 }
spec:
  images: [{ glob: "**" }]
  policies: [{ kind: ImagePolicy, name: ci }]
  expires: "${iso(NOW + HOUR)}"
`,
].join('---\n');

async function snapshot() {
  const { snapshot } = await compileSnapshot(parsePolicyYaml(YAML, 'default'), {
    namespace: 'signet-system',
  });
  if (snapshot === undefined) throw new Error('no snapshot');
  return snapshot;
}

const byName = (statuses: ReturnType<typeof namespacedStatuses>) =>
  Object.fromEntries(statuses.map((s) => [`${s.kind}/${s.namespace}/${s.name}`, s]));

describe('the status of ImagePolicies and exceptions', () => {
  it("says whether each ImagePolicy compiled, as a ClusterImagePolicy's, for the generation compiled", async () => {
    const statuses = byName(namespacedStatuses(await snapshot(), NOW));
    expect(statuses['ImagePolicy/team-a/ci']).toEqual({
      kind: 'ImagePolicy',
      namespace: 'team-a',
      name: 'ci',
      generation: 2,
      condition: {
        type: 'Ready',
        status: 'True',
        reason: 'Compiled',
        message: 'compiled, enforce: 1 authority (team-key: key)',
      },
      annotations: {},
    });
    expect(statuses['ImagePolicy/team-b/bad-key']).toMatchObject({
      generation: 5,
      condition: { status: 'False', reason: 'Invalid' },
    });
    expect(statuses['ImagePolicy/team-b/bad-key']?.condition.message).toMatch(
      /it denies every image it matches until fixed$/,
    );
    // One that loosens the cluster does not parse: it guards its globs, and says why.
    expect(statuses['ImagePolicy/team-b/loose']?.condition).toMatchObject({
      status: 'False',
      reason: 'Unreadable',
    });
    expect(statuses['ImagePolicy/team-b/loose']?.condition.message).toContain('static');
  });

  it('says which exceptions apply now, which expired, which may never apply, and which do not compile', async () => {
    const statuses = byName(namespacedStatuses(await snapshot(), NOW));
    expect(statuses['ImagePolicyException/team-a/hotfix']).toEqual({
      kind: 'ImagePolicyException',
      namespace: 'team-a',
      name: 'hotfix',
      generation: 3,
      condition: {
        type: 'Ready',
        status: 'True',
        reason: 'Active',
        message: `exempts its images from ImagePolicy ci, ClusterImagePolicy release until ${iso(NOW + 2 * HOUR)}`,
      },
      annotations: {},
    });
    expect(statuses['ImagePolicyException/team-a/yesterday']?.condition).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'Expired',
      message: `expired at ${iso(NOW - HOUR)}: it exempts nothing`,
    });
    expect(statuses['ImagePolicyException/team-a/forever']?.condition).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'TooLong',
      message: `expires at ${iso(NOW + HOUR)}, more than the maximum lifetime (720h) after its creation at ${iso(NOW - 40 * 24 * HOUR)}: it exempts nothing`,
    });
    expect(statuses['ImagePolicyException/team-a/bad-glob']).toMatchObject({
      generation: 3,
      condition: { status: 'False', reason: 'Invalid' },
    });
    expect(statuses['ImagePolicyException/team-a/bad-glob']?.condition.message).toMatch(
      /spec\.images\[0\]\.glob.*it exempts nothing until fixed$/,
    );
    expect(statuses['ImagePolicyException/team-a/no-reason']).toMatchObject({
      generation: 1,
      condition: { status: 'False', reason: 'Invalid' },
    });
    expect(statuses['ImagePolicyException/team-a/no-reason']?.condition.message).toContain('spec.reason');
  });

  it('changes with time alone: the soonest active expiry is when to look again, and then it says Expired', async () => {
    const compiled = await snapshot();
    expect(nextExceptionExpiry(compiled, NOW)).toBe(NOW + HOUR);
    expect(nextExceptionExpiry(compiled, NOW + HOUR)).toBe(NOW + 2 * HOUR);
    expect(nextExceptionExpiry(compiled, NOW + 2 * HOUR)).toBeUndefined();
    const before = byName(namespacedStatuses(compiled, NOW + HOUR - 1))['ImagePolicyException/team-a/sooner'];
    const after = byName(namespacedStatuses(compiled, NOW + HOUR))['ImagePolicyException/team-a/sooner'];
    expect(before?.condition.reason).toBe('Active');
    expect(after?.condition.reason).toBe('Expired');
    // What the writer stores: a new condition (and transition time) at the expiry, nothing again after.
    const active = statusUpdate(undefined, before ?? ({} as never), new Date(NOW));
    const expired = statusUpdate(active, after ?? ({} as never), new Date(NOW + HOUR));
    expect(expired).toMatchObject({
      observedGeneration: 3,
      conditions: [{ reason: 'Expired', status: 'False', lastTransitionTime: iso(NOW + HOUR) }],
    });
    expect(statusUpdate(expired, after ?? ({} as never), new Date(NOW + 2 * HOUR))).toBeUndefined();
  });

  it("the background audit's fingerprint changes when an exception expires, so it scans again", async () => {
    const compiled = await snapshot();
    expect(fingerprintOf(compiled, NOW)).toBe(fingerprintOf(compiled, NOW + HOUR - 1));
    expect(fingerprintOf(compiled, NOW + HOUR)).not.toBe(fingerprintOf(compiled, NOW + HOUR - 1));
  });
});
