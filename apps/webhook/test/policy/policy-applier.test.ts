// The policy lifecycle. Events reach a real API server in e2e/test/webhook-kube.test.ts; here an
// in-memory reporter stands in so every reported object and message can be checked.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { SignetMetrics } from '../../src/metrics.js';
import { type PolicyProblemReporter, policyApplier } from '../../src/policy/policy-applier.js';
import { parsePolicyYaml } from '../../src/policy/policy-file.js';
import type { ObjectRef } from '../../src/policy/policy-objects.js';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { LogCapture } from '../helpers.js';

const good = `apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: good }
spec:
  images: [{ glob: "registry.example/**" }]
  authorities: [{ static: { action: pass } }]
`;

function setup() {
  const store = new PolicyStore();
  const logs = new LogCapture();
  const reported: { object: ObjectRef; reason: string; message: string }[] = [];
  const events: PolicyProblemReporter = {
    async warn(object, reason, message) {
      reported.push({ object, reason, message });
    },
  };
  const metrics = new SignetMetrics({ defaultMetrics: false });
  const apply = policyApplier({
    store,
    compile: { namespace: 'signet-system' },
    logger: createLogger({ destination: logs }),
    metrics,
    events,
  });
  return { store, logs, reported, metrics, apply };
}

describe('policyApplier', () => {
  it('installs a compiled snapshot, one record per policy, and counts it', async () => {
    const { store, apply, metrics, logs } = setup();
    await apply(parsePolicyYaml(good, 'signet-system'));
    const [policy] = store.current?.set.policies ?? [];
    expect(policy).toMatchObject({ name: 'good', mode: 'enforce', broken: undefined });
    expect(policy?.verify).toMatchObject({ name: 'good', mode: 'enforce' });
    expect(await metrics.registry.getSingleMetricAsString('signet_policies')).toContain('state="active"} 1');
    expect(logs.lines.at(-1)).toMatchObject({ msg: 'policies loaded', policies: ['good'], broken: [] });
  });

  it('keeps a policy that cannot be enforced, denying what it matches, and reports it on the object', async () => {
    const { store, apply, reported } = setup();
    await apply(
      parsePolicyYaml(
        `${good}---
apiVersion: policy.sigstore.dev/v1alpha1
kind: ClusterImagePolicy
metadata: { name: rego }
spec:
  images: [{ glob: "registry.example/**" }]
  authorities: [{ static: { action: pass } }]
  policy: { type: rego, data: "package x" }
`,
        'signet-system',
      ),
    );
    const rego = store.current?.set.policies.find((p) => p.name === 'rego');
    expect(rego?.broken).toMatch(/rego/i);
    expect(rego?.verify.compiled.authorities).toMatchObject([{ type: 'static', action: 'fail' }]);
    expect(store.current?.broken.has('rego')).toBe(true);
    expect(reported).toEqual([
      {
        object: { apiVersion: 'policy.sigstore.dev/v1alpha1', kind: 'ClusterImagePolicy', name: 'rego' },
        reason: 'InvalidPolicy',
        message: expect.stringMatching(/rego/i),
      },
    ]);
  });

  it('keeps the previous snapshot when the new set cannot be used (an invalid glob)', async () => {
    const { store, apply, logs } = setup();
    await apply(parsePolicyYaml(good, 'signet-system'));
    const before = store.current;
    await apply(
      parsePolicyYaml(good.replace('registry.example/**', 'registry.example/[a-'), 'signet-system'),
    );
    expect(store.current).toBe(before);
    expect(logs.lines.at(-1)).toMatchObject({
      msg: 'the new policies cannot be used; keeping the previous ones',
    });
  });
});
