// The policy lifecycle. Events reach a real API server in e2e/test/webhook-kube.test.ts; here an
// in-memory reporter stands in so every reported object and message can be checked.

import { parseReference } from '@signet/core';
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
    const [policy] = store.current?.policySet.policies ?? [];
    expect(policy).toMatchObject({ name: 'good', mode: 'enforce', broken: undefined });
    expect(policy).toMatchObject({ name: 'good', mode: 'enforce', compiled: { policy: 'good' } });
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
    const rego = store.current?.policySet.policies.find((p) => p.name === 'rego');
    expect(rego?.broken).toMatch(/rego/i);
    expect(rego?.compiled.authorities).toMatchObject([{ type: 'static', action: 'fail' }]);
    expect(store.current?.broken.has('rego')).toBe(true);
    expect(reported).toEqual([
      {
        object: { apiVersion: 'policy.sigstore.dev/v1alpha1', kind: 'ClusterImagePolicy', name: 'rego' },
        reason: 'InvalidPolicy',
        message: expect.stringMatching(/rego/i),
      },
    ]);
  });

  it('never lets a policy vanish: one that does not parse, or has an invalid glob or selector, denies what it may have matched', async () => {
    const { store, apply, metrics, logs } = setup();
    await apply(
      parsePolicyYaml(
        `${good}---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: typo }
spec:
  images: [{ glob: "registry.example/team/**" }]
  authorities: [{ keyy: {} }]
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: numeric-glob }
spec:
  mode: warn
  images: [{ glob: 1 }]
  authorities: [{ static: { action: pass } }]
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: bad-glob }
spec:
  images: [{ glob: "other.example/[a-" }]
  authorities: [{ static: { action: pass } }]
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: bad-selector }
spec:
  images: [{ glob: "selected.example/**" }]
  match: [{ version: v1, resource: pods, selector: { matchExpressions: [{ key: "a", operator: In }] } }]
  authorities: [{ static: { action: pass } }]
`,
        'signet-system',
      ),
    );
    const snapshot = store.current;
    if (snapshot === undefined) throw new Error('no snapshot');
    expect([...snapshot.broken.keys()].sort()).toEqual(['bad-glob', 'bad-selector', 'numeric-glob', 'typo']);
    const subject = { group: '', version: 'v1', resource: 'pods', labels: {} };
    const matching = (image: string) => {
      const match = snapshot.match(parseReference(image), subject);
      return match.kind === 'matched' ? match.policies.map((p) => `${p.name}:${p.mode}`) : [];
    };
    // its readable globs; every image for a glob that cannot be read or compiled, in its own mode
    expect(matching('registry.example/team/app:v1')).toEqual([
      'bad-glob:enforce',
      'good:enforce',
      'numeric-glob:warn',
      'typo:enforce',
    ]);
    expect(matching('anything.example/x:1')).toEqual(['bad-glob:enforce', 'numeric-glob:warn']);
    expect(matching('selected.example/x:1')).toEqual([
      'bad-glob:enforce',
      'bad-selector:enforce',
      'numeric-glob:warn',
    ]);
    const typo = snapshot.policySet.policies.find((p) => p.name === 'typo');
    expect(typo?.compiled.authorities).toMatchObject([
      {
        type: 'static',
        action: 'fail',
        message: expect.stringMatching(
          /^policy cannot be enforced: cannot be parsed: spec\.authorities\[0\]: exactly one of key, keyless or static/,
        ),
      },
    ]);
    expect(await metrics.registry.getSingleMetricAsString('signet_policies')).toContain('state="invalid"} 4');
    expect(logs.lines.at(-1)).toMatchObject({
      msg: 'policies loaded',
      broken: ['bad-glob', 'bad-selector', 'numeric-glob', 'typo'],
    });
  });

  it('compiles a view with a remote policy that could not be fetched again, on a schedule, until a newer view comes', async () => {
    const store = new PolicyStore();
    const logs = new LogCapture();
    const fetched: string[] = [];
    const apply = policyApplier({
      store,
      compile: {
        namespace: 'signet-system',
        fetchRemotePolicy: async (url) => {
          fetched.push(url);
          throw new Error('connection refused');
        },
      },
      logger: createLogger({ destination: logs }),
      metrics: new SignetMetrics({ defaultMetrics: false }),
      retryAfterMs: 100,
    });
    const remote = `${good}  policy:
    type: cel
    remote: { url: "https://policies.example/p.cel", sha256sum: "${'a'.repeat(64)}" }
`;
    await apply(parsePolicyYaml(remote, 'signet-system'));
    expect(store.current?.broken.get('good')).toContain(
      'spec.policy.remote (policy of the ClusterImagePolicy): connection refused',
    );
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(fetched.length).toBeGreaterThanOrEqual(3);
    // A newer view without the remote policy ends the schedule.
    await apply(parsePolicyYaml(good, 'signet-system'));
    const after = fetched.length;
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(fetched.length).toBe(after);
    expect(store.current?.broken.size).toBe(0);
  });
});
