// The rollout contract holds with namespace policies: the decision table decides *whether* to
// verify before any policy is looked at, so scale-downs, status and metadata writes are admitted
// without consulting a single policy, whatever ImagePolicies (or exceptions) the namespace has; and
// an ImagePolicy added in the middle of a rollout does not wedge it.
import { fc, test } from '@fast-check/vitest';
import type { AdmissionRequest, KubeObject } from '@signet/k8s-types';
import { describe, expect, it } from 'vitest';
import { decideAdmission } from '../src/decide.js';
import { compilePolicies, type PolicySet } from '../src/match.js';
import { applyOtherEdits, build, otherEditsArb, partsArb } from './support/arbitraries.js';
import { cip, DAY, DIGEST, exception, imagePolicy, judge, NOW } from './support/tenancy.js';
import {
  ALL_KINDS,
  edited,
  loadRequest,
  objectOf,
  podSpec,
  requestFor,
  update,
} from './support/workloads.js';

/** Policies of `namespace` that fail every image they see, beside a cluster policy that does too. */
function hostile(namespace: string): PolicySet {
  return compilePolicies(
    [
      cip('release', ['**']),
      imagePolicy(namespace, 'deny-all', ['**'], {
        authorities: [{ static: { action: 'fail', message: 'no' } }],
      }),
      imagePolicy(namespace, 'team-key', ['**']),
    ],
    {
      exceptions: [
        exception(namespace, 'expired', {
          policies: [{ kind: 'ImagePolicy', name: 'team-key' }],
          expires: NOW - DAY,
        }),
      ],
    },
  );
}

const fails = () => false;

describe('what starts no container is admitted without consulting any policy, namespaced ones included', () => {
  it.each([
    ['replicaset-scale-down.json', 'scale-down'],
    ['replicaset-annotation-write.json', 'template-unchanged'],
    ['replicaset-owned-scale-up.json', 'owned-scale-up'],
    ['pod-job-finalizer-removal.json', 'pod-images-unchanged'],
  ])('%s (%s)', (fixture, rule) => {
    const request = loadRequest(fixture);
    const { outcome, verified } = judge(hostile(request.namespace ?? ''), request, fails);
    expect(decideAdmission(request).rule).toBe(rule);
    expect(verified).toEqual([]);
    expect(outcome).toMatchObject({ allowed: true, denials: [] });
  });

  it('status and scale subresources, and objects being deleted', () => {
    const old = objectOf('Deployment', { scale: 3 });
    const cases: AdmissionRequest[] = [
      update('Deployment', old, old, 'status'),
      update('Deployment', old, objectOf('Deployment', { scale: 1 }), 'scale'),
      update(
        'Deployment',
        old,
        objectOf('Deployment', { scale: 3, deleting: true, spec: podSpec(['evil/image:1']) }),
      ),
    ];
    for (const request of cases) {
      const { outcome, verified } = judge(hostile('shop'), request, fails);
      expect(verified).toEqual([]);
      expect(outcome.allowed).toBe(true);
    }
  });

  const kindArb = fc.constantFrom(...ALL_KINDS);
  test.prop([kindArb, partsArb, otherEditsArb], { numRuns: 200 })(
    'any UPDATE the table admits stays admitted, whatever policies the namespace has',
    (kind, parts, edits) => {
      const request = update(kind, build(kind, parts), applyOtherEdits(kind, parts, edits));
      const { outcome, verified } = judge(hostile(request.namespace ?? ''), request, fails);
      expect(verified).toEqual([]);
      expect(outcome.allowed).toBe(true);
    },
  );
});

describe('an ImagePolicy added in the middle of a rollout does not wedge it', () => {
  // The rollout of a Deployment from v1 to v2 in team-a. Both pass the cluster's policy; the team
  // adds a policy that only v2 passes (its new CI identity) while the rollout runs.
  const V1 = `registry.example/team-a/shop@sha256:${'1'.repeat(64)}`;
  const V2 = `registry.example/team-a/shop@${DIGEST}`;
  const passes = (policy: string, image: string) => policy === 'release' || image === V2;
  const before = compilePolicies([cip('release', ['registry.example/**'])]);
  const after = compilePolicies([
    cip('release', ['registry.example/**']),
    imagePolicy('team-a', 'new-ci', ['registry.example/team-a/**']),
  ]);
  const spec = (image: string) => ({ containers: [{ name: 'shop', image }] });
  const inTeamA = (request: AdmissionRequest): AdmissionRequest => ({ ...request, namespace: 'team-a' });
  const replicaSet = (
    image: string,
    replicas: number,
    annotations: Record<string, string> = {},
  ): KubeObject =>
    objectOf('ReplicaSet', {
      spec: spec(image),
      scale: replicas,
      controller: true,
      annotations: { 'deployment.kubernetes.io/desired-replicas': '3', ...annotations },
    });

  it('the controller winds the old ReplicaSet down while the new one comes up', () => {
    // Before the policy: the Deployment's new template and the new ReplicaSet are admitted.
    const deployment = objectOf('Deployment', { spec: spec(V1), scale: 3 });
    const rolled = objectOf('Deployment', { spec: spec(V2), scale: 3 });
    expect(judge(before, inTeamA(update('Deployment', deployment, rolled)), passes).outcome.allowed).toBe(
      true,
    );
    expect(
      judge(before, inTeamA(requestFor('ReplicaSet', 'CREATE', replicaSet(V2, 1))), passes).outcome.allowed,
    ).toBe(true);

    // The team's policy arrives. Every write the controllers still have to make:
    const steps: [string, AdmissionRequest][] = [
      ['new ReplicaSet scaled up', update('ReplicaSet', replicaSet(V2, 1), replicaSet(V2, 2))],
      ['new Pod created', requestFor('Pod', 'CREATE', objectOf('Pod', { spec: spec(V2) }))],
      ['old ReplicaSet scaled down', update('ReplicaSet', replicaSet(V1, 3), replicaSet(V1, 2))],
      [
        'old ReplicaSet annotated at the same scale',
        update(
          'ReplicaSet',
          replicaSet(V1, 2),
          replicaSet(V1, 2, { 'deployment.kubernetes.io/max-replicas': '4' }),
        ),
      ],
      ['old ReplicaSet to zero', update('ReplicaSet', replicaSet(V1, 2), replicaSet(V1, 0))],
      [
        'an old Pod losing its finalizer',
        update(
          'Pod',
          edited(objectOf('Pod', { spec: spec(V1) }), (pod) => {
            (pod.metadata as { finalizers?: string[] }).finalizers = ['example.com/drain'];
          }),
          objectOf('Pod', { spec: spec(V1) }),
        ),
      ],
      ['the Deployment status', update('Deployment', rolled, rolled, 'status')],
    ];
    for (const [step, request] of steps) {
      const { outcome } = judge(after, inTeamA(request), passes);
      expect(outcome.allowed, `${step}: ${outcome.denials.join('; ')}`).toBe(true);
    }

    // The old image is what the team's policy now refuses: new Pods of it, and a rollback to it.
    expect(
      judge(after, inTeamA(requestFor('Pod', 'CREATE', objectOf('Pod', { spec: spec(V1) }))), passes).outcome
        .allowed,
    ).toBe(false);
    expect(judge(after, inTeamA(update('Deployment', rolled, deployment)), passes).outcome.allowed).toBe(
      false,
    );
  });
});
