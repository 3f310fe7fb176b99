// Properties of how ClusterImagePolicies, ImagePolicies and exceptions combine, over generated
// policy sets, namespaces, images and verifier answers: a namespace can only add requirements, and
// an exception can only remove the ones it names, while it is valid.
import { fc, test } from '@fast-check/vitest';
import type { ClusterImagePolicy, ImagePolicy, ImagePolicyException, NoMatchPolicy } from '@signet/k8s-types';
import { describe, expect } from 'vitest';
import { compilePolicies } from '../src/match.js';
import { cip, DAY, exception, imagePolicy, judge, NOW, type Oracle, podCreate } from './support/tenancy.js';

const RUNS = { numRuns: 300 };
const NAMESPACES = ['team-a', 'team-b'] as const;
const GLOBS = [
  'registry.example/**',
  'registry.example/team-a/**',
  'registry.example/team-a/app*',
  'ghcr.io/**',
  'quay.io/*/*',
  '**',
];
const digest = (c: string) => `sha256:${c.repeat(64)}`;
const DIGEST_IMAGES = [
  `registry.example/team-a/app@${digest('1')}`,
  `registry.example/team-b/app@${digest('2')}`,
  `ghcr.io/team-a/tool@${digest('3')}`,
  `quay.io/x/y@${digest('1')}`,
  `docker.io/library/alpine@${digest('4')}`,
];
const IMAGES = [...DIGEST_IMAGES, 'registry.example/team-a/app:v1', 'ghcr.io/team-a/tool:latest'];
const POLICY_NAMES = ['p1', 'p2', 'p3'] as const;

const globsArb = fc.subarray(GLOBS, { minLength: 1, maxLength: 3 });
const clusterArb: fc.Arbitrary<ClusterImagePolicy[]> = fc
  .uniqueArray(fc.record({ name: fc.constantFrom(...POLICY_NAMES), globs: globsArb, warn: fc.boolean() }), {
    selector: (p) => p.name,
    maxLength: 3,
  })
  .map((list) => list.map((p) => cip(p.name, p.globs, p.warn ? { mode: 'warn' } : {})));

const imagePolicyArb: fc.Arbitrary<ImagePolicy> = fc
  .record({
    namespace: fc.constantFrom(...NAMESPACES),
    name: fc.constantFrom(...POLICY_NAMES),
    globs: globsArb,
  })
  .map((p) => imagePolicy(p.namespace, p.name, p.globs));
const namespacedArb = fc
  .uniqueArray(imagePolicyArb, {
    selector: (p) => `${p.metadata.namespace}/${p.metadata.name}`,
    maxLength: 4,
  })
  .map((list) => [...list]);

const exceptionArb: fc.Arbitrary<ImagePolicyException> = fc
  .record({
    namespace: fc.constantFrom(...NAMESPACES),
    name: fc.constantFrom('e1', 'e2', 'e3'),
    images: fc.array(
      fc.oneof(
        fc.constantFrom(...GLOBS).map((glob) => ({ glob })),
        fc.constantFrom('1', '2', '3', '4').map((c) => ({ digest: digest(c) })),
      ),
      { minLength: 1, maxLength: 2 },
    ),
    policies: fc.array(
      fc.record({
        kind: fc.constantFrom('ClusterImagePolicy' as const, 'ImagePolicy' as const),
        name: fc.constantFrom(...POLICY_NAMES),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    // Created up to 40 days ago (or in a file, with no creation time); expiring within ±40 days.
    created: fc.option(fc.integer({ min: -40, max: 0 }), { nil: undefined }),
    expires: fc.integer({ min: -40 * 24, max: 40 * 24 }),
  })
  .map((e) =>
    exception(e.namespace, e.name, {
      images: e.images,
      policies: e.policies,
      ...(e.created === undefined ? {} : { created: NOW + e.created * DAY }),
      expires: NOW + e.expires * (DAY / 24),
    }),
  );
const exceptionsArb = fc.uniqueArray(exceptionArb, {
  selector: (e) => `${e.metadata.namespace}/${e.metadata.name}`,
  maxLength: 3,
});

const worldArb = fc.record({
  cluster: clusterArb,
  namespaced: namespacedArb,
  exceptions: exceptionsArb,
  noMatchPolicy: fc.constantFrom<NoMatchPolicy>('deny', 'warn', 'allow'),
  namespace: fc.constantFrom(...NAMESPACES),
  images: fc.subarray(IMAGES, { minLength: 1, maxLength: 3 }),
  // Whether each policy passes for each image: any answer the verifier could give.
  passes: fc.func(fc.boolean()),
});
type World = typeof worldArb extends fc.Arbitrary<infer T> ? T : never;

function outcomeOf(world: World, changes: Partial<World> = {}) {
  const w = { ...world, ...changes };
  const set = compilePolicies([...w.cluster, ...w.namespaced], {
    noMatchPolicy: w.noMatchPolicy,
    exceptions: w.exceptions,
  });
  return judge(set, podCreate(w.namespace, w.images), w.passes as Oracle);
}

describe('a namespace can only add requirements', () => {
  test.prop([worldArb, imagePolicyArb], RUNS)(
    'adding an ImagePolicy never admits what was denied before',
    (world, added) => {
      fc.pre(
        !world.namespaced.some(
          (p) => p.metadata.name === added.metadata.name && p.metadata.namespace === added.metadata.namespace,
        ),
      );
      const before = outcomeOf(world).outcome;
      const after = outcomeOf(world, { namespaced: [...world.namespaced, added] }).outcome;
      if (!before.allowed) expect(after.allowed).toBe(false);
      // Nor does it take away a denial line the cluster's policies gave.
      for (const line of before.denials) {
        const image = line.slice(0, line.indexOf(': '));
        expect(after.denials.some((l) => l.startsWith(image))).toBe(true);
      }
    },
  );

  test.prop([worldArb], RUNS)('ImagePolicies never change what the no-match policy denies', (world) => {
    const without = outcomeOf(world, { namespaced: [] }).verdicts;
    const withThem = outcomeOf(world).verdicts;
    without.forEach((verdict, i) => {
      if (verdict.outcome.kind === 'no-match' && verdict.outcome.action === 'deny') {
        expect(withThem[i]?.outcome).toEqual(verdict.outcome);
      }
    });
  });
});

describe('an exception removes only what it names, while it is valid', () => {
  test.prop([worldArb, exceptionArb], RUNS)('removing an exception never admits more', (world, removed) => {
    fc.pre(
      !world.exceptions.some(
        (e) =>
          e.metadata.name === removed.metadata.name && e.metadata.namespace === removed.metadata.namespace,
      ),
    );
    const withIt = outcomeOf(world, { exceptions: [...world.exceptions, removed] }).outcome;
    const without = outcomeOf(world).outcome;
    if (without.allowed) expect(withIt.allowed).toBe(true);
  });

  test.prop([worldArb, exceptionArb], RUNS)(
    'an expired exception, or one longer-lived than allowed, admits nothing: everything is as without it',
    (world, candidate) => {
      const expiresAt = Date.parse(candidate.spec.expires);
      const createdAt = candidate.metadata.creationTimestamp;
      const start = createdAt === undefined ? NOW : Date.parse(createdAt);
      fc.pre(expiresAt <= NOW || expiresAt - start > 30 * DAY);
      const others = world.exceptions.filter(
        (e) =>
          e.metadata.name !== candidate.metadata.name ||
          e.metadata.namespace !== candidate.metadata.namespace,
      );
      const withIt = outcomeOf(world, { exceptions: [...others, candidate] });
      const without = outcomeOf(world, { exceptions: others });
      expect(withIt.outcome).toEqual(without.outcome);
      expect(withIt.verified).toEqual(without.verified);
    },
  );

  test.prop([worldArb, exceptionArb], RUNS)(
    'an exception never affects a policy it does not name',
    (world, added) => {
      const images = world.images.filter((image) => image.includes('@'));
      fc.pre(images.length > 0);
      const others = world.exceptions.filter(
        (e) => e.metadata.name !== added.metadata.name || e.metadata.namespace !== added.metadata.namespace,
      );
      const named = new Set(
        added.spec.policies.map((p) =>
          p.kind === 'ImagePolicy' ? `${added.metadata.namespace}/${p.name}` : p.name,
        ),
      );
      const withIt = outcomeOf(world, { images, exceptions: [...others, added] });
      const without = outcomeOf(world, { images, exceptions: others });
      const unnamed = (entries: readonly string[]) =>
        entries.filter((e) => !named.has(e.slice(e.lastIndexOf(': ') + 2)));
      // Every policy it does not name is verified exactly as before...
      expect(unnamed(withIt.verified)).toEqual(unnamed(without.verified));
      // ...and what it adds to the exemptions are policies it names, by its name.
      withIt.verdicts.forEach((verdict, i) => {
        const before = new Set(
          (without.verdicts[i]?.exemptions ?? []).map((e) => `${e.policy} ${e.exception}`),
        );
        for (const exemption of verdict.exemptions ?? []) {
          if (before.has(`${exemption.policy} ${exemption.exception}`)) continue;
          expect(named.has(exemption.policy)).toBe(true);
          expect(exemption.exception).toBe(`${added.metadata.namespace}/${added.metadata.name}`);
        }
      });
    },
  );
});
