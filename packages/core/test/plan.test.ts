import { parseClusterImagePolicy } from '@signet/k8s-types';
import { describe, expect, it } from 'vitest';
import { decideAdmission, type ImageTarget, type VerifyDecision } from '../src/decide.js';
import { compilePolicies, matchSubjectOf } from '../src/match.js';
import { checkedVerdict, planChecks } from '../src/plan.js';
import { objectOf, podSpec, requestFor } from './support/workloads.js';

const set = compilePolicies([
  parseClusterImagePolicy({
    apiVersion: 'policy.sigstore.dev/v1alpha1',
    kind: 'ClusterImagePolicy',
    metadata: { name: 'ghcr' },
    spec: { images: [{ glob: 'ghcr.io/**' }], authorities: [{ static: { action: 'pass' } }] },
  }),
]);

describe('planChecks', () => {
  it('one check per image: verify, invalid reference or no match', () => {
    const request = requestFor(
      'Deployment',
      'CREATE',
      objectOf('Deployment', {
        spec: {
          containers: [
            { name: 'a', image: 'ghcr.io/org/app:1' },
            { name: 'b', image: 'Bad/Image' },
            { name: 'c', image: 'quay.io/x/y' },
          ],
        },
      }),
    );
    const checks = planChecks(decideAdmission(request), set, matchSubjectOf(request));
    expect(checks.map((check) => check.kind)).toEqual(['verify', 'settled', 'settled']);
    const [verify, invalid, noMatch] = checks;
    expect(verify).toMatchObject({
      kind: 'verify',
      target: { path: 'spec.template.spec.containers[0].image', image: 'ghcr.io/org/app:1' },
      reference: { matchName: 'ghcr.io/org/app:1' },
    });
    expect(verify?.kind === 'verify' && verify.policies.map((p) => p.name)).toEqual(['ghcr']);
    expect(invalid).toMatchObject({
      verdict: {
        path: 'spec.template.spec.containers[1].image',
        image: 'Bad/Image',
        outcome: { kind: 'invalid-reference' },
      },
    });
    expect(noMatch).toEqual({
      kind: 'settled',
      verdict: {
        path: 'spec.template.spec.containers[2].image',
        image: 'quay.io/x/y',
        outcome: { kind: 'no-match', action: 'deny' },
      },
    });
  });

  it('nothing to check for an admitted request', () => {
    const request = requestFor('Pod', 'UPDATE', objectOf('Pod'), objectOf('Pod'));
    expect(planChecks(decideAdmission(request), set, matchSubjectOf(request))).toEqual([]);
  });

  it('an unexpected error is not mistaken for an invalid reference', () => {
    const request = requestFor('Pod', 'CREATE', objectOf('Pod', { spec: podSpec(['ghcr.io/a/b']) }));
    const decision = decideAdmission(request) as VerifyDecision;
    const target = { ...(decision.images[0] as ImageTarget), image: 42 as unknown as string };
    const malformed: VerifyDecision = { ...decision, images: [target] };
    expect(() => planChecks(malformed, set, matchSubjectOf(request))).toThrow(TypeError);
  });
});

describe('checkedVerdict: the verifier results joined with the policies they are about', () => {
  const policies = compilePolicies(
    ['enforced', 'watched'].map((name) =>
      parseClusterImagePolicy({
        apiVersion: 'policy.sigstore.dev/v1beta1',
        kind: 'ClusterImagePolicy',
        metadata: { name },
        spec: {
          images: [{ glob: 'ghcr.io/**' }],
          authorities: [{ static: { action: 'pass' } }],
          ...(name === 'watched' ? { mode: 'warn' } : {}),
        },
      }),
    ),
  );
  const request = requestFor(
    'Pod',
    'CREATE',
    objectOf('Pod', {
      spec: { containers: [{ name: 'a', image: `ghcr.io/org/app@sha256:${'a'.repeat(64)}` }] },
    }),
  );
  const [check] = planChecks(decideAdmission(request), policies, matchSubjectOf(request));
  if (check?.kind !== 'verify') throw new Error('expected a verify check');
  const failure = { kind: 'policy' as const, reason: 'no signature found' };

  it("takes each policy's mode from its record, in the check's order", () => {
    const verdict = checkedVerdict(check, [
      { policy: 'enforced', passed: true, authority: 'key' },
      { policy: 'watched', passed: false, failure },
    ]);
    expect(verdict).toEqual({
      path: check.target.path,
      image: check.target.image,
      outcome: {
        kind: 'policies',
        verdicts: [
          { policy: 'enforced', mode: 'enforce', passed: true, authority: 'key' },
          { policy: 'watched', mode: 'warn', passed: false, failure },
        ],
      },
    });
  });

  it('fails a policy without its result as infrastructure: a missing answer never admits', () => {
    const verdict = checkedVerdict(check, [{ policy: 'watched', passed: true }]);
    expect(verdict.outcome).toEqual({
      kind: 'policies',
      verdicts: [
        {
          policy: 'enforced',
          mode: 'enforce',
          passed: false,
          failure: { kind: 'infrastructure', reason: 'the verifier gave no result for the policy' },
        },
        {
          policy: 'watched',
          mode: 'warn',
          passed: false,
          failure: { kind: 'infrastructure', reason: 'the verifier gave no result for the policy' },
        },
      ],
    });
  });
});
