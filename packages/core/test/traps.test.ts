// The traps the contract names, each run end to end through core on a realistic AdmissionReview:
// decide, plan the checks, verify with a stand-in verifier, and build both responses.
import { type AdmissionRequest, parseClusterImagePolicy } from '@signet/k8s-types';
import { describe, expect, it } from 'vitest';
import { type AdmissionDecision, decideAdmission } from '../src/decide.js';
import { compilePolicies, matchSubjectOf } from '../src/match.js';
import { planChecks } from '../src/plan.js';
import { mutatingResponse, summarizeAdmission, validatingResponse } from '../src/response.js';
import { type ImageVerdict, policyVerdict } from '../src/verdict.js';
import { getAt, loadRequest, requestFor } from './support/workloads.js';

const policies = compilePolicies([
  parseClusterImagePolicy({
    apiVersion: 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata: { name: 'release' },
    spec: {
      images: [{ glob: 'registry.example:5000/**' }, { glob: 'ghcr.io/example/**' }],
      authorities: [{ name: 'release-key', key: { data: '-----BEGIN PUBLIC KEY-----\n...' } }],
    },
  }),
]);

/** Stand-in verifier: an image passes when it is pinned to a digest of a signed build. */
function verify(
  request: AdmissionRequest,
  decision: AdmissionDecision,
): { verdicts: ImageVerdict[]; calls: number } {
  let calls = 0;
  const verdicts = planChecks(decision, policies, matchSubjectOf(request)).map((check): ImageVerdict => {
    if (check.kind === 'settled') return check.verdict;
    const { path, image } = check.target;
    const verdicts = check.policies.map((policy) => {
      calls++;
      const signed = check.reference.digest !== undefined;
      return policyVerdict(policy, [
        signed
          ? { authority: 'release-key', passed: true }
          : {
              authority: 'release-key',
              passed: false,
              failure: {
                kind: 'policy',
                reason: 'no valid signature: 1 found, 0 verified',
                cause: new Error('signature does not match key "release-2026"'),
              },
            },
      ]);
    });
    return { path, image, outcome: { kind: 'policies', verdicts } };
  });
  return { verdicts, calls };
}

function admit(request: AdmissionRequest) {
  const decision = decideAdmission(request);
  const { verdicts, calls } = verify(request, decision);
  const outcome = summarizeAdmission(decision, verdicts);
  return {
    decision,
    calls,
    response: validatingResponse(outcome),
    patch: mutatingResponse(
      decision,
      new Map(
        decision.action === 'verify'
          ? decision.mutations.map((t) => [t.path, `sha256:${'a'.repeat(64)}`])
          : [],
      ),
    ),
  };
}

const UNSIGNED_LINE = (path: string) =>
  `${path} registry.example:5000/team/shop:v1-unsigned: policy "release" (enforce): ` +
  'no valid signature: 1 found, 0 verified (signature does not match key "release-2026")';

describe('traps of the admission contract', () => {
  it('the deployment controller scaling the old ReplicaSet down is admitted without a registry (rule 4)', () => {
    const result = admit(loadRequest('replicaset-scale-down.json'));
    expect(result.decision).toEqual({ action: 'admit', rule: 'scale-down' });
    expect(result.calls).toBe(0);
    expect(result.response).toEqual({ allowed: true });
    expect(result.patch).toEqual({ allowed: true });
  });

  it("the deployment controller's annotation-only write to an old ReplicaSet at the same replica count is admitted (rule 4)", () => {
    const request = loadRequest('replicaset-annotation-write.json');
    expect(request.object?.metadata?.annotations?.['deployment.kubernetes.io/desired-replicas']).toBe('5');
    const result = admit(request);
    expect(result.decision).toEqual({ action: 'admit', rule: 'template-unchanged' });
    expect(result.calls).toBe(0);
    expect(result.response.allowed).toBe(true);
    expect(result.patch.patch).toBeUndefined();
  });

  it('one UPDATE that lowers replicas and swaps the image is verified (rule 7 wins over rule 4)', () => {
    const result = admit(loadRequest('deployment-scale-down-image-swap.json'));
    expect(result.decision.rule).toBe('template-changed');
    expect(result.response.allowed).toBe(false);
    expect(result.response.status?.code).toBe(403);
    expect(result.response.status?.message?.split('\n')).toEqual([
      UNSIGNED_LINE('spec.template.spec.containers[0].image'),
      'spec.template.spec.containers[1].image ghcr.io/envoyproxy/envoy:v1.31.2: ' +
        'no ClusterImagePolicy matches (no-match-policy: deny)',
      UNSIGNED_LINE('spec.template.spec.initContainers[0].image'),
    ]);
  });

  it('a Deployment scaled through /scale during a rollout: the raised old ReplicaSet is admitted (rule 5), its new Pods are denied at CREATE', () => {
    const request = loadRequest('replicaset-owned-scale-up.json');
    const result = admit(request);
    expect(result.decision.rule).toBe('owned-scale-up');
    expect(result.calls).toBe(0);
    expect(result.response).toEqual({
      allowed: true,
      warnings: [
        'ReplicaSet storefront/shop-7c9d8f5b4c: spec.replicas raised from 1 to 2 by its controller Deployment/shop; ' +
          'admitted without verifying images, each new Pod is verified when it is created',
      ],
    });
    expect(result.patch.patch).toBeUndefined();

    const template = getAt(request.object, ['spec', 'template']) as { metadata: object; spec: object };
    const pod = requestFor('Pod', 'CREATE', { apiVersion: 'v1', kind: 'Pod', ...template });
    const created = admit(pod);
    expect(created.decision.rule).toBe('create');
    expect(created.response.allowed).toBe(false);
    // The template's image is a tag: a Pod running it is refused before any registry call.
    expect(created.response.status?.message).toMatch(
      /^spec\.containers\[0\]\.image \S+: policy "release" \(enforce\): the tag is not pinned to a digest/,
    );
    expect(created.calls).toBe(0);
  });

  it('the Job controller removing its job-tracking finalizer from a Pod that predates the policy is admitted (rule 8)', () => {
    const request = loadRequest('pod-job-finalizer-removal.json');
    expect(request.oldObject?.metadata?.finalizers).toEqual(['batch.kubernetes.io/job-tracking']);
    const result = admit(request);
    expect(result.decision).toEqual({ action: 'admit', rule: 'pod-images-unchanged' });
    expect(result.calls).toBe(0);
    expect(result.response.allowed).toBe(true);
  });

  it('kubectl rollout undo back to an unsigned template is denied at the Deployment (rule 7)', () => {
    const result = admit(loadRequest('deployment-rollout-undo.json'));
    expect(result.decision.rule).toBe('template-changed');
    expect(result.response.allowed).toBe(false);
    expect(result.response.status?.message).toContain(
      UNSIGNED_LINE('spec.template.spec.containers[0].image'),
    );
    // The mutating endpoint may pin exactly the fields that are verified, nothing else.
    const operations = JSON.parse(Buffer.from(result.patch.patch ?? '', 'base64').toString('utf8')) as {
      path: string;
    }[];
    expect(new Set(operations.map((op) => op.path))).toEqual(
      new Set([
        '/spec/template/spec/containers/0/image',
        '/spec/template/spec/containers/1/image',
        '/spec/template/spec/initContainers/0/image',
      ]),
    );
  });

  it('kubectl debug with a signed debug image on a pod whose main image fell out of compliance is admitted (rule 10)', () => {
    const result = admit(loadRequest('pod-ephemeral-debug.json'));
    expect(result.decision).toMatchObject({ action: 'verify', rule: 'ephemeral-containers-added' });
    expect(result.calls).toBe(1);
    expect(result.response).toEqual({ allowed: true });
  });

  it('a Deployment CREATE of the unsigned image is denied (rule 3)', () => {
    const result = admit(loadRequest('deployment-create.json'));
    expect(result.decision.rule).toBe('create');
    expect(result.response.allowed).toBe(false);
    expect(result.response.status?.message).not.toContain('[object Object]');
  });
});
