// The contract's table of namespaced policies and exceptions (docs/admission-contract.md), row by
// row: which policies an image admitted in a namespace must pass, and how exceptions change that.
import {
  ALLOW_UNPINNED_TAGS_ANNOTATION,
  type ImagePolicyException,
  type NoMatchPolicy,
} from '@signet/k8s-types';
import { describe, expect, it } from 'vitest';
import { compileException } from '../src/exceptions.js';
import { compilePolicies, compilePolicy, matchPolicies, policySet } from '../src/match.js';
import { parseReference } from '../src/reference.js';
import { validatingResponse } from '../src/response.js';
import {
  cip,
  DAY,
  DIGEST,
  type ExceptionOptions,
  exception,
  imagePolicy,
  judge,
  NOW,
  type Oracle,
  podCreate,
} from './support/tenancy.js';

const APP = `registry.example/team-a/app@${DIGEST}`;
const TOOL = `ghcr.io/team-a/tool@${DIGEST}`;
const OTHER = `quay.io/x/y@${DIGEST}`;

const release = cip('release', ['registry.example/**']);
const teamCi = imagePolicy('team-a', 'ci', ['registry.example/team-a/**']);
const teamTools = imagePolicy('team-a', 'tools', ['ghcr.io/team-a/**']);
const foreign = imagePolicy('team-b', 'everything', ['**']);

function setWith(noMatchPolicy: NoMatchPolicy = 'deny', exceptions: readonly ImagePolicyException[] = []) {
  return compilePolicies([release, teamCi, teamTools, foreign], { noMatchPolicy, exceptions });
}

const all: Oracle = () => true;
const failing =
  (...names: string[]): Oracle =>
  (policy) =>
    !names.includes(policy);

describe('which policies an image admitted in a namespace must pass', () => {
  it('N1: a ClusterImagePolicy alone, when no ImagePolicy of the namespace matches', () => {
    const { verified, outcome } = judge(setWith(), podCreate('team-c', [APP]), all);
    expect(verified).toEqual([`${APP}: release`]);
    expect(outcome.allowed).toBe(true);
  });

  it('N2: every matching ClusterImagePolicy and every matching ImagePolicy of the namespace (AND)', () => {
    const set = setWith();
    expect(judge(set, podCreate('team-a', [APP]), all).verified).toEqual([
      `${APP}: release`,
      `${APP}: team-a/ci`,
    ]);
    const denied = judge(set, podCreate('team-a', [APP]), failing('team-a/ci')).outcome;
    expect(denied.allowed).toBe(false);
    expect(denied.denials).toEqual([
      `spec.containers[0].image ${APP}: policy "team-a/ci" (enforce): no valid signature`,
    ]);
    // The cluster's policy failing is not made up for by the team's passing.
    expect(judge(set, podCreate('team-a', [APP]), failing('release')).outcome.allowed).toBe(false);
  });

  it("N3: only an ImagePolicy matches and no-match-policy is deny: denied, the team's policy cannot admit it", () => {
    const { verified, outcome } = judge(setWith('deny'), podCreate('team-a', [TOOL]), all);
    expect(verified).toEqual([]);
    expect(outcome.denials).toEqual([
      `spec.containers[0].image ${TOOL}: no ClusterImagePolicy matches (no-match-policy: deny)`,
    ]);
  });

  it('N4: only an ImagePolicy matches and no-match-policy is warn: the ImagePolicy must pass, and the warning stays', () => {
    const set = setWith('warn');
    const passed = judge(set, podCreate('team-a', [TOOL]), all);
    expect(passed.verified).toEqual([`${TOOL}: team-a/tools`]);
    expect(passed.outcome).toMatchObject({
      allowed: true,
      warnings: [`spec.containers[0].image ${TOOL}: no ClusterImagePolicy matches (no-match-policy: warn)`],
    });
    const failed = judge(set, podCreate('team-a', [TOOL]), failing('team-a/tools')).outcome;
    expect(failed.allowed).toBe(false);
    expect(failed.warnings).toHaveLength(1);
  });

  it('N5: only an ImagePolicy matches and no-match-policy is allow: the ImagePolicy must pass', () => {
    const set = setWith('allow');
    expect(judge(set, podCreate('team-a', [TOOL]), all).outcome).toMatchObject({
      allowed: true,
      warnings: [],
    });
    expect(judge(set, podCreate('team-a', [TOOL]), failing('team-a/tools')).outcome.allowed).toBe(false);
    // Nothing matches at all: the no-match policy alone, as without ImagePolicies.
    expect(judge(set, podCreate('team-a', [OTHER]), all).verified).toEqual([]);
  });

  it("N6: another namespace's ImagePolicies never apply", () => {
    const set = setWith('allow');
    expect(judge(set, podCreate('team-a', [OTHER]), failing('team-b/everything')).outcome.allowed).toBe(true);
    expect(judge(set, podCreate('team-b', [OTHER]), failing('team-b/everything')).outcome.allowed).toBe(
      false,
    );
  });

  it("a set keeps ClusterImagePolicies apart and each namespace's ImagePolicies sorted by name", () => {
    const set = policySet([teamTools, release, foreign, teamCi].map(compilePolicy));
    expect(set.policies.map((p) => p.name)).toEqual(['release']);
    expect([...set.namespaced].map(([ns, list]) => [ns, list.map((p) => p.name)])).toEqual([
      ['team-a', ['team-a/ci', 'team-a/tools']],
      ['team-b', ['team-b/everything']],
    ]);
    expect(set.exceptions.size).toBe(0);
    expect(set.maxExceptionLifetimeMs).toBe(30 * DAY);
  });

  it("an ImagePolicy always enforces, and whether Pods may run tags stays the cluster's choice", () => {
    const lax = imagePolicy(
      'team-a',
      'lax',
      ['ghcr.io/**'],
      {},
      {
        annotations: { [ALLOW_UNPINNED_TAGS_ANNOTATION]: 'true' },
      },
    );
    const compiled = compilePolicy(lax);
    expect(compiled).toMatchObject({
      name: 'team-a/lax',
      kind: 'ImagePolicy',
      namespace: 'team-a',
      mode: 'enforce',
    });
    expect(compiled.allowsUnpinnedTags).toBe(false);
    const set = compilePolicies([lax], { noMatchPolicy: 'allow' });
    const { outcome, verified } = judge(set, podCreate('team-a', ['ghcr.io/team-a/tool:v1']), all);
    expect(verified).toEqual([]);
    expect(outcome.denials[0]).toContain('policy "team-a/lax" (enforce): the tag is not pinned to a digest');
  });
});

describe('exceptions', () => {
  const hotfix = (policies: ExceptionOptions['policies'], extra: Partial<ExceptionOptions> = {}) =>
    exception('team-a', 'hotfix', {
      images: [{ glob: 'registry.example/team-a/*' }],
      policies,
      created: NOW - DAY,
      expires: NOW + DAY,
      ...extra,
    });

  it('N7: a valid exception removes the ClusterImagePolicy it names for the images it names, with a warning naming it', () => {
    const set = setWith('deny', [hotfix([{ kind: 'ClusterImagePolicy', name: 'release' }])]);
    const { verified, outcome } = judge(set, podCreate('team-a', [APP]), failing('release'));
    expect(verified).toEqual([`${APP}: team-a/ci`]);
    expect(outcome.allowed).toBe(true);
    expect(outcome.warnings).toEqual([
      `spec.containers[0].image ${APP}: policy "release" not applied: exempted by ImagePolicyException team-a/hotfix until 2026-05-02T12:00:00.000Z (reason of hotfix)`,
    ]);
    // The policies it does not name still apply: the team's own one failing still denies.
    expect(judge(set, podCreate('team-a', [APP]), failing('release', 'team-a/ci')).outcome.allowed).toBe(
      false,
    );
  });

  it('N8: an exception naming an ImagePolicy removes that one, of its own namespace', () => {
    const set = setWith('deny', [hotfix([{ kind: 'ImagePolicy', name: 'ci' }])]);
    expect(judge(set, podCreate('team-a', [APP]), failing('team-a/ci')).verified).toEqual([
      `${APP}: release`,
    ]);
    expect(judge(set, podCreate('team-a', [APP]), failing('team-a/ci')).outcome.allowed).toBe(true);
  });

  it('N9: an expired exception applies to nothing, from the second it expires', () => {
    const set = setWith('deny', [
      hotfix([{ kind: 'ClusterImagePolicy', name: 'release' }], { expires: NOW }),
    ]);
    const at = (now: number) =>
      judge(set, podCreate('team-a', [APP]), failing('release'), now).outcome.allowed;
    expect(at(NOW - 1)).toBe(true);
    expect(at(NOW)).toBe(false);
    expect(at(NOW + DAY)).toBe(false);
  });

  it('N10: an exception written to live longer than the operator allows applies to nothing', () => {
    const long = hotfix([{ kind: 'ClusterImagePolicy', name: 'release' }], {
      created: NOW - DAY,
      expires: NOW + 30 * DAY,
    });
    const set = (maxExceptionLifetimeMs: number) =>
      policySet(compilePolicies([release]).policies, {
        exceptions: [compileException(long)],
        maxExceptionLifetimeMs,
      });
    expect(judge(set(31 * DAY), podCreate('team-a', [APP]), failing('release')).outcome.allowed).toBe(true);
    expect(judge(set(31 * DAY - 1), podCreate('team-a', [APP]), failing('release')).outcome.allowed).toBe(
      false,
    );
    // The default maximum is 30 days.
    expect(
      judge(setWith('deny', [long]), podCreate('team-a', [APP]), failing('release')).outcome.allowed,
    ).toBe(false);
  });

  it('N11 and N12: an exception of another namespace, or one that does not name the image, changes nothing', () => {
    const elsewhere = exception('team-b', 'hotfix', {
      policies: [{ kind: 'ClusterImagePolicy', name: 'release' }],
      expires: NOW + DAY,
    });
    const otherImage = hotfix([{ kind: 'ClusterImagePolicy', name: 'release' }], {
      images: [{ glob: 'registry.example/team-a/other' }, { digest: `sha256:${'e'.repeat(64)}` }],
    });
    const set = setWith('deny', [elsewhere, otherImage]);
    expect(judge(set, podCreate('team-a', [APP]), failing('release')).outcome.allowed).toBe(false);
  });

  it('an exception may name an image by its digest, in any repository', () => {
    const byDigest = hotfix([{ kind: 'ClusterImagePolicy', name: 'release' }], {
      images: [{ digest: DIGEST }],
    });
    const set = setWith('deny', [byDigest]);
    expect(
      judge(set, podCreate('team-a', [`registry.example/elsewhere/app@${DIGEST}`]), failing('release'))
        .outcome.allowed,
    ).toBe(true);
    // A tag carries no digest to compare: not covered (the mutating webhook pins Pods first).
    expect(
      judge(set, podCreate('team-a', ['registry.example/team-a/app:v1']), failing('release')).verdicts[0]
        ?.exemptions,
    ).toBeUndefined();
  });

  it('N13: an exception that removes every policy leaves nothing to verify: admitted with its warning', () => {
    const set = setWith('deny', [
      hotfix([
        { kind: 'ClusterImagePolicy', name: 'release' },
        { kind: 'ImagePolicy', name: 'ci' },
      ]),
    ]);
    const { verified, outcome, verdicts } = judge(set, podCreate('team-a', [APP]), () => false);
    expect(verified).toEqual([]);
    expect(verdicts[0]?.outcome).toEqual({ kind: 'exempted' });
    expect(outcome.allowed).toBe(true);
    expect(outcome.warnings[0]).toContain(
      'policy "release" not applied: exempted by ImagePolicyException team-a/hotfix',
    );
    expect(outcome.warnings[0]).toContain('; policy "team-a/ci" not applied');
    expect(validatingResponse(outcome).warnings).toEqual(outcome.warnings);
  });

  it('N13 without a ClusterImagePolicy under no-match-policy warn: the no-match warning stays beside the exemption', () => {
    const set = setWith('warn', [
      exception('team-a', 'tools', {
        policies: [{ kind: 'ImagePolicy', name: 'tools' }],
        expires: NOW + DAY,
      }),
    ]);
    const { outcome } = judge(set, podCreate('team-a', [TOOL]), () => false);
    expect(outcome.allowed).toBe(true);
    expect(outcome.warnings).toEqual([
      `spec.containers[0].image ${TOOL}: no ClusterImagePolicy matches (no-match-policy: warn); policy "team-a/tools" not applied: exempted by ImagePolicyException team-a/tools until 2026-05-02T12:00:00.000Z (reason of tools)`,
    ]);
  });

  it('N14: no exception admits what no ClusterImagePolicy matches under no-match-policy deny', () => {
    const set = setWith('deny', [
      exception('team-a', 'tools', {
        policies: [{ kind: 'ImagePolicy', name: 'tools' }],
        expires: NOW + DAY,
      }),
    ]);
    expect(judge(set, podCreate('team-a', [TOOL]), all).outcome.allowed).toBe(false);
  });

  it('exempted policies do not ask for a pinned digest either; the ones left still do', () => {
    const tag = 'registry.example/team-a/app:v1';
    const onlyRelease = setWith('deny', [
      hotfix([
        { kind: 'ClusterImagePolicy', name: 'release' },
        { kind: 'ImagePolicy', name: 'ci' },
      ]),
    ]);
    expect(judge(onlyRelease, podCreate('team-a', [tag]), all).outcome.allowed).toBe(true);
    const partly = setWith('deny', [hotfix([{ kind: 'ClusterImagePolicy', name: 'release' }])]);
    const { outcome, verdicts } = judge(partly, podCreate('team-a', [tag]), all);
    expect(outcome.denials[0]).toContain('policy "team-a/ci" (enforce): the tag is not pinned');
    expect(verdicts[0]?.exemptions?.map((e) => e.policy)).toEqual(['release']);
  });

  it('without a time, no exception applies (the caller must say when it is)', () => {
    const set = setWith('deny', [hotfix([{ kind: 'ClusterImagePolicy', name: 'release' }])]);
    expect(judge(set, podCreate('team-a', [APP]), failing('release'), null).outcome.allowed).toBe(false);
    expect(
      matchPolicies(
        set,
        parseReference(APP),
        { group: '', version: 'v1', resource: 'pods', labels: {}, namespace: 'team-a' },
        NOW,
      ),
    ).toMatchObject({
      kind: 'matched',
      exemptions: [{ policy: 'release', exception: 'team-a/hotfix' }],
    });
  });

  it('of two exceptions naming the same policy, the first by name is the one the warning names', () => {
    const a = exception('team-a', 'a-first', {
      policies: [{ kind: 'ClusterImagePolicy', name: 'release' }],
      expires: NOW + DAY,
    });
    const b = exception('team-a', 'b-second', {
      policies: [{ kind: 'ClusterImagePolicy', name: 'release' }],
      expires: NOW + DAY,
    });
    const set = compilePolicies([release], { exceptions: [b, a] });
    expect(judge(set, podCreate('team-a', [APP]), () => false).verdicts[0]?.exemptions).toEqual([
      {
        policy: 'release',
        exception: 'team-a/a-first',
        expires: '2026-05-02T12:00:00.000Z',
        reason: 'reason of a-first',
      },
    ]);
  });

  it('a long or multi-line reason is cut to one short line in the warning', () => {
    const wordy = exception('team-a', 'wordy', {
      policies: [{ kind: 'ClusterImagePolicy', name: 'release' }],
      expires: NOW + DAY,
    });
    const set = compilePolicies([release], {
      exceptions: [{ ...wordy, spec: { ...wordy.spec, reason: `line one\nline two ${'x'.repeat(300)}` } }],
    });
    const warning = judge(set, podCreate('team-a', [APP]), () => false).outcome.warnings[0] ?? '';
    expect(warning).toContain('(line one line two xxx');
    expect(warning.endsWith('...)')).toBe(true);
    expect(warning).not.toContain('x'.repeat(200));
  });
});
