// A Pod must run the image that was verified: tags in Pod specs are denied under enforce policies
// unless the policy (or the whole server) opts out, and admitted with a warning when it does.
import { ALLOW_UNPINNED_TAGS_ANNOTATION, parseClusterImagePolicy } from '@signet/k8s-types';
import { describe, expect, it } from 'vitest';
import { decideAdmission } from '../src/decide.js';
import { compilePolicies, matchSubjectOf } from '../src/match.js';
import { planChecks } from '../src/plan.js';
import { summarizeAdmission, validatingResponse } from '../src/response.js';
import { policyVerdict } from '../src/verdict.js';
import { edited, objectOf, requestFor, setAt, update } from './support/workloads.js';

const D = `sha256:${'d'.repeat(64)}`;

function policy(name: string, glob: string, options: { mode?: 'warn'; allowTags?: boolean } = {}) {
  return parseClusterImagePolicy({
    apiVersion: 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata: {
      name,
      ...(options.allowTags ? { annotations: { [ALLOW_UNPINNED_TAGS_ANNOTATION]: 'true' } } : {}),
    },
    spec: {
      images: [{ glob }],
      authorities: [{ static: { action: 'pass' } }],
      ...(options.mode ? { mode: options.mode } : {}),
    },
  });
}

const set = compilePolicies([
  policy('release', 'registry.example/team/**'),
  policy('tags-ok', 'registry.example/lax/**', { allowTags: true }),
  policy('watching', 'registry.example/watch/**', { mode: 'warn' }),
]);

function pod(image: string) {
  return objectOf('Pod', { spec: { containers: [{ name: 'a', image }] } });
}

/** Plans and answers the request, passing every check that reaches the verifier. */
function answer(request: ReturnType<typeof requestFor>, options = {}) {
  const decision = decideAdmission(request);
  const checks = planChecks(decision, set, matchSubjectOf(request), options);
  const verdicts = checks.map((check) =>
    check.kind === 'settled'
      ? check.verdict
      : {
          path: check.target.path,
          image: check.target.image,
          outcome: {
            kind: 'policies' as const,
            verdicts: check.policies.map((p) => policyVerdict(p, [{ authority: 'a', passed: true }])),
          },
        },
  );
  return { checks, response: validatingResponse(summarizeAdmission(decision, verdicts)) };
}

describe('tags in what starts containers', () => {
  it('a Pod CREATE running a tag under an enforce policy is denied before any registry call, saying how to fix it', () => {
    const { checks, response } = answer(requestFor('Pod', 'CREATE', pod('registry.example/team/app:v1')));
    expect(checks.map((c) => c.kind)).toEqual(['settled']);
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toBe(
      'spec.containers[0].image registry.example/team/app:v1: policy "release" (enforce): the tag is not pinned to a digest, ' +
        "so the image the kubelet pulls may not be the one verified; use a digest (image@sha256:...) or let Signet's mutating webhook pin the tag",
    );
  });

  it('a Pod UPDATE that changes an image to a tag, and added ephemeral containers with a tag, are denied alike', () => {
    const old = pod(`registry.example/team/app@${D}`);
    const changed = edited(old, (o) =>
      setAt(o, ['spec', 'containers', '0', 'image'], 'registry.example/team/app:v2'),
    );
    expect(answer(update('Pod', old, changed)).response.allowed).toBe(false);
    const debug = edited(old, (o) =>
      setAt(o, ['spec', 'ephemeralContainers'], [{ name: 'debug', image: 'registry.example/team/debug:1' }]),
    );
    expect(answer(update('Pod', old, debug, 'ephemeralcontainers')).response.status?.message).toMatch(
      /^spec\.ephemeralContainers\[0\]\.image registry\.example\/team\/debug:1: .*the tag is not pinned/,
    );
  });

  it('a digest (with or without its tag) is verified and admitted without a warning', () => {
    for (const image of [`registry.example/team/app@${D}`, `registry.example/team/app:v1@${D}`]) {
      const { checks, response } = answer(requestFor('Pod', 'CREATE', pod(image)));
      expect(checks.map((c) => c.kind)).toEqual(['verify']);
      expect(response).toEqual({ allowed: true });
    }
  });

  it('workload templates keep verifying the tag: their Pods are pinned and checked at CREATE', () => {
    const deployment = objectOf('Deployment', {
      spec: { containers: [{ name: 'a', image: 'registry.example/team/app:v1' }] },
    });
    const { checks, response } = answer(requestFor('Deployment', 'CREATE', deployment));
    expect(checks.map((c) => c.kind)).toEqual(['verify']);
    expect(response).toEqual({ allowed: true });
  });

  it('a policy that allows tags, warn mode, or the global opt-out admit the tag with a warning naming the risk', () => {
    const warning = expect.stringContaining(
      'the tag is not pinned to a digest: admitted as the image it points at now, and the kubelet may pull another image if the tag moves',
    );
    for (const image of ['registry.example/lax/app:v1', 'registry.example/watch/app:v1']) {
      const { checks, response } = answer(requestFor('Pod', 'CREATE', pod(image)));
      expect(checks.map((c) => c.kind)).toEqual(['verify']);
      expect(response).toEqual({ allowed: true, warnings: [warning] });
    }
    const global = answer(requestFor('Pod', 'CREATE', pod('registry.example/team/app:v1')), {
      allowUnpinnedTags: true,
    });
    expect(global.response).toEqual({ allowed: true, warnings: [warning] });
  });

  it("an image no policy covers is not Signet's to pin", () => {
    expect(
      answer(requestFor('Pod', 'CREATE', pod('elsewhere.example/app:v1'))).response.status?.message,
    ).toContain('no ClusterImagePolicy matches');
  });
});

describe('requests Signet cannot read', () => {
  it('are denied with the reason, never admitted', () => {
    const request = {
      ...requestFor('Pod', 'CREATE', pod(`registry.example/team/app@${D}`)),
      kind: { group: '', version: 'v1', kind: 'EphemeralContainers' },
    };
    const { checks, response } = answer(request);
    expect(checks).toEqual([]);
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toMatch(
      /^cannot read a pods request carrying a EphemeralContainers object/,
    );
  });
});
