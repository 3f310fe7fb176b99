import { type ClusterImagePolicy, parseClusterImagePolicy } from '@signet/k8s-types';
import { describe, expect, it } from 'vitest';
import { InvalidPolicyError } from '../src/errors.js';
import {
  compilePolicies,
  compilePolicy,
  type MatchSubject,
  matchPolicies,
  matchSubjectOf,
} from '../src/match.js';
import { parseReference } from '../src/reference.js';
import { objectOf, requestFor } from './support/workloads.js';

function policy(name: string, spec: Record<string, unknown>): ClusterImagePolicy {
  return parseClusterImagePolicy({
    apiVersion: 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata: { name },
    spec: { authorities: [{ static: { action: 'pass' } }], ...spec },
  });
}

const pod: MatchSubject = { group: '', version: 'v1', resource: 'pods', labels: { app: 'shop' } };
const deployment: MatchSubject = { group: 'apps', version: 'v1', resource: 'deployments', labels: {} };

function names(set: ReturnType<typeof compilePolicies>, image: string, subject: MatchSubject = pod) {
  const match = matchPolicies(set, parseReference(image), subject);
  return match.kind === 'matched' ? match.policies.map((p) => `${p.name}:${p.mode}`) : match;
}

describe('matchPolicies', () => {
  const set = compilePolicies([
    policy('zeta-all-ghcr', { images: [{ glob: 'ghcr.io/**' }] }),
    policy('alpha-org', { images: [{ glob: 'docker.io/nothing' }, { glob: 'ghcr.io/org/*' }], mode: 'warn' }),
    policy('hub-official', { images: [{ glob: '*' }] }),
  ]);

  it('returns every matching policy (all must pass), sorted by name, with its mode', () => {
    expect(names(set, 'ghcr.io/org/app:1')).toEqual(['alpha-org:warn', 'zeta-all-ghcr:enforce']);
    expect(names(set, 'ghcr.io/other/app/x')).toEqual(['zeta-all-ghcr:enforce']);
    expect(names(set, 'alpine')).toEqual(['hub-official:enforce']);
  });

  it('applies the no-match policy, deny by default', () => {
    expect(names(set, 'quay.io/x/y')).toEqual({ kind: 'no-match', action: 'deny' });
    for (const action of ['warn', 'allow', 'deny'] as const) {
      const configured = compilePolicies([policy('p', { images: [{ glob: 'ghcr.io/**' }] })], {
        noMatchPolicy: action,
      });
      expect(names(configured, 'quay.io/x/y')).toEqual({ kind: 'no-match', action });
    }
  });

  it('an empty policy set matches nothing', () => {
    expect(names(compilePolicies([]), 'alpine')).toEqual({ kind: 'no-match', action: 'deny' });
  });

  it('orders policies of the same name deterministically', () => {
    const twins = compilePolicies([
      policy('same', { images: [{ glob: '**' }], mode: 'warn' }),
      policy('same', { images: [{ glob: '**' }] }),
    ]);
    expect(names(twins, 'alpine')).toEqual(['same:warn', 'same:enforce']);
  });
});

describe('match: resources and label selectors, as policy-controller compares them', () => {
  const scoped = (match: unknown[]) =>
    compilePolicies([policy('scoped', { images: [{ glob: '**' }], match })]);

  const cases: [string, unknown[], MatchSubject, boolean][] = [
    ['resource, version and core group', [{ resource: 'pods', version: 'v1' }], pod, true],
    ['version wildcard', [{ group: 'apps', resource: 'deployments', version: '*' }], deployment, true],
    ['another resource', [{ resource: 'pods', version: 'v1' }], deployment, false],
    ['another group', [{ group: 'batch', resource: 'deployments', version: 'v1' }], deployment, false],
    ['a missing group is the core group', [{ resource: 'deployments', version: 'v1' }], deployment, false],
    ['another version', [{ resource: 'pods', version: 'v2' }], pod, false],
    ['no version matches nothing (upstream compares verbatim)', [{ resource: 'pods' }], pod, false],
    [
      'any one entry suffices',
      [
        { resource: 'jobs', version: 'v1' },
        { resource: 'pods', version: 'v1' },
      ],
      pod,
      true,
    ],
    [
      'selector on the object labels',
      [{ resource: 'pods', version: 'v1', selector: { matchLabels: { app: 'shop' } } }],
      pod,
      true,
    ],
    [
      'selector not satisfied',
      [{ resource: 'pods', version: 'v1', selector: { matchLabels: { app: 'db' } } }],
      pod,
      false,
    ],
  ];
  for (const [what, match, subject, applies] of cases) {
    it(what, () => {
      expect(names(scoped(match), 'alpine', subject)).toEqual(
        applies ? ['scoped:enforce'] : { kind: 'no-match', action: 'deny' },
      );
    });
  }

  it('no match entries: the policy applies to every resource', () => {
    expect(
      names(compilePolicies([policy('any', { images: [{ glob: '**' }], match: [] })]), 'alpine', deployment),
    ).toEqual(['any:enforce']);
  });
});

describe('compilePolicy errors name the policy and the field, keeping the cause', () => {
  it('an invalid glob', () => {
    const bad = policy('bad-glob', { images: [{ glob: 'ghcr.io/**' }, { glob: '[a-z]*' }] });
    let error: unknown;
    try {
      compilePolicies([policy('good', { images: [{ glob: '**' }] }), bad]);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidPolicyError);
    expect(error).toMatchObject({ code: 'INVALID_GLOB', policy: 'bad-glob', path: 'spec.images[1].glob' });
    expect((error as Error).message).toBe(
      'ClusterImagePolicy "bad-glob" spec.images[1].glob: invalid glob "[a-z]*": only letters, digits, "-", "_", ":", "/", "*", "." and "@" are allowed',
    );
    expect((error as Error).cause).toBeInstanceOf(InvalidPolicyError);
  });

  it('an invalid selector', () => {
    const bad = policy('bad-selector', {
      images: [{ glob: '**' }],
      match: [
        {
          resource: 'pods',
          version: 'v1',
          selector: { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] },
        },
      ],
    });
    expect(() => compilePolicy(bad)).toThrow(
      expect.objectContaining({
        code: 'INVALID_SELECTOR',
        path: 'spec.match[0].selector.matchExpressions[0].values',
        message:
          'ClusterImagePolicy "bad-selector" spec.match[0].selector.matchExpressions[0].values: operator In needs at least one value',
      }),
    );
  });

  it('an error that is not about the policy passes through unchanged', () => {
    const malformed = {
      ...policy('odd', { images: [{ glob: '**' }] }),
      spec: {
        images: [{ glob: '**' }],
        authorities: [],
        match: [{ resource: 'pods', selector: { matchExpressions: 7 } }],
      },
    } as unknown as ClusterImagePolicy;
    expect(() => compilePolicy(malformed)).toThrow(TypeError);
  });
});

describe('matchSubjectOf', () => {
  it('takes group and version from the request, the plural resource from the kind, and the object labels', () => {
    const request = requestFor(
      'Deployment',
      'CREATE',
      objectOf('Deployment', { labels: { app: 'x' }, templateLabels: { t: '1' } }),
    );
    expect(matchSubjectOf(request)).toEqual({
      group: 'apps',
      version: 'v1',
      resource: 'deployments',
      labels: { app: 'x' },
      namespace: 'shop',
    });
  });
  it('is the resource the API server routed, whatever kind the request claims, and no labels without any', () => {
    const request = {
      ...requestFor('Pod', 'CREATE', null),
      kind: { group: 'example.com', version: 'v2', kind: 'Thing' },
    };
    expect(matchSubjectOf(request)).toEqual({
      group: '',
      version: 'v1',
      resource: 'pods',
      labels: {},
      namespace: 'shop',
    });
    expect(matchSubjectOf(requestFor('Pod', 'CREATE', { kind: 'Pod' })).labels).toEqual({});
    // A request without a namespace (none of the covered kinds) gets no namespace's policies.
    const { namespace: _namespace, ...clusterScoped } = requestFor('Pod', 'CREATE', { kind: 'Pod' });
    expect(matchSubjectOf(clusterScoped).namespace).toBe('');
  });
});
