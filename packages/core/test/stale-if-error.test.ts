// Stale-if-error (issue 24): when a verification record may admit in place of a verification that
// failed. Examples of each refusal, then properties over generated verdicts and records: a policy
// failure is never admitted, another fingerprint never admits, nor a tag, another image or policy,
// an expired record or a grace period of 0.
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import type { VerifyDecision } from '../src/decide.js';
import { parseReference } from '../src/reference.js';
import { summarizeAdmission } from '../src/response.js';
import {
  applyGrace,
  CLOCK_SKEW_MS,
  formatAge,
  type GraceContext,
  type GraceQuestion,
  graceFor,
  type PassRecord,
  repositoryOf,
} from '../src/stale-if-error.js';
import type { ImageVerdict, PolicyVerdict } from '../src/verdict.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;
const OTHER_DIGEST = `sha256:${'b'.repeat(64)}`;
const IMAGE = `registry.example/team/app@${DIGEST}`;
const REFERENCE = parseReference(IMAGE);
const NOW = Date.parse('2026-12-05T12:00:00Z');
const HOUR = 3_600_000;
const FINGERPRINT = 'sha256:f1';

const outage: PolicyVerdict = {
  policy: 'release',
  mode: 'enforce',
  passed: false,
  failure: { kind: 'infrastructure', reason: 'cannot read signatures from the registry' },
};
const unsigned: PolicyVerdict = {
  policy: 'release',
  mode: 'enforce',
  passed: false,
  failure: { kind: 'policy', reason: 'no valid signature: 0 found' },
};
const record: PassRecord = {
  repository: 'registry.example/team/app',
  digest: DIGEST,
  policy: 'release',
  fingerprint: FINGERPRINT,
  verifiedAt: NOW - 3 * HOUR,
};
const question: GraceQuestion = {
  reference: REFERENCE,
  verdict: outage,
  fingerprint: FINGERPRINT,
  record,
  graceMs: 24 * HOUR,
  now: NOW,
};

describe('graceFor', () => {
  it('admits an infrastructure failure on a record of the same image, policy and fingerprint', () => {
    expect(graceFor(question)).toEqual({ admit: true, ageMs: 3 * HOUR });
  });

  const refusals: [string, Partial<{ [K in keyof GraceQuestion]: GraceQuestion[K] | undefined }>, string][] =
    [
      ['a policy failure (the signature is gone or wrong)', { verdict: unsigned }, 'policy-failure'],
      ['a pass', { verdict: { policy: 'release', mode: 'enforce', passed: true } }, 'passed'],
      ['grace period 0', { graceMs: 0 }, 'off'],
      ['a grace period that is not a number', { graceMs: Number.NaN }, 'off'],
      ['a tag', { reference: parseReference('registry.example/team/app:v1') }, 'tag'],
      ['no record', { record: undefined }, 'no-record'],
      ['a record of another digest', { record: { ...record, digest: OTHER_DIGEST } }, 'other-image'],
      [
        'a record of the same digest in another repository',
        { record: { ...record, repository: 'registry.example/team/other' } },
        'other-image',
      ],
      ['a record of another policy', { record: { ...record, policy: 'other' } }, 'other-policy'],
      [
        "another policy's fingerprint (a changed policy, key or trust root)",
        { record: { ...record, fingerprint: 'sha256:f2' } },
        'other-fingerprint',
      ],
      [
        'an empty fingerprint',
        { fingerprint: '', record: { ...record, fingerprint: '' } },
        'other-fingerprint',
      ],
      ['a record older than the grace period', { graceMs: 2 * HOUR }, 'expired'],
      ['a record with no usable time', { record: { ...record, verifiedAt: Number.NaN } }, 'expired'],
      [
        'a record from the future beyond the clock skew',
        { record: { ...record, verifiedAt: NOW + CLOCK_SKEW_MS + 1 } },
        'future',
      ],
    ];
  for (const [what, change, refusal] of refusals) {
    it(`refuses ${what}`, () => {
      expect(graceFor({ ...question, ...change } as GraceQuestion)).toEqual({ admit: false, refusal });
    });
  }

  it("tolerates a writer's clock a little ahead (age 0)", () => {
    expect(graceFor({ ...question, record: { ...record, verifiedAt: NOW + 5_000 } })).toEqual({
      admit: true,
      ageMs: 0,
    });
  });

  it('a record exactly as old as the grace period still admits; a millisecond more does not', () => {
    expect(graceFor({ ...question, graceMs: 3 * HOUR }).admit).toBe(true);
    expect(graceFor({ ...question, graceMs: 3 * HOUR - 1 }).admit).toBe(false);
  });
});

const decision: VerifyDecision = {
  action: 'verify',
  rule: 'create',
  images: [
    {
      path: 'spec.containers[0].image',
      image: IMAGE,
      field: 'containers',
      index: 0,
      name: 'c0',
      pointer: '',
    },
  ],
  mutations: [],
  startsContainers: true,
};

function contextWith(records: Record<string, PassRecord | undefined>, graceMs = 24 * HOUR): GraceContext {
  return {
    reference: REFERENCE,
    now: NOW,
    policy: (name) => (name === 'unknown' ? undefined : { fingerprint: FINGERPRINT, graceMs }),
    record: (policy) => records[policy],
  };
}

describe('applyGrace and the answer', () => {
  it('admits with a warning naming the age and the failure', () => {
    const verdict: ImageVerdict = {
      path: 'spec.containers[0].image',
      image: IMAGE,
      outcome: { kind: 'policies', verdicts: [outage] },
    };
    const applied = applyGrace(verdict, contextWith({ release: record }));
    expect(applied.graced).toEqual([{ policy: 'release', ageMs: 3 * HOUR, failure: outage.failure }]);
    const outcome = summarizeAdmission(decision, [applied.verdict]);
    expect(outcome.allowed).toBe(true);
    expect(outcome.warnings).toEqual([
      `spec.containers[0].image ${IMAGE}: policy "release" (enforce): admitted on a verification record 3h old ` +
        '(stale-if-error): verification failed now: infrastructure failure: cannot read signatures from the registry',
    ]);
  });

  it("names the failure's cause in the warning", () => {
    const failure = { ...outage.failure, cause: new Error('connect ECONNREFUSED 10.0.0.7:443') } as const;
    const verdict: ImageVerdict = {
      path: 'spec.containers[0].image',
      image: IMAGE,
      outcome: { kind: 'policies', verdicts: [{ ...outage, failure }] },
    };
    const applied = applyGrace(verdict, contextWith({ release: record }));
    expect(summarizeAdmission(decision, [applied.verdict]).warnings).toEqual([
      `spec.containers[0].image ${IMAGE}: policy "release" (enforce): admitted on a verification record 3h old ` +
        '(stale-if-error): verification failed now: infrastructure failure: cannot read signatures from the registry ' +
        '(connect ECONNREFUSED 10.0.0.7:443)',
    ]);
  });

  it('one policy graced, another failing by policy: still denied', () => {
    const second: PolicyVerdict = { ...unsigned, policy: 'sbom' };
    const verdict: ImageVerdict = {
      path: 'spec.containers[0].image',
      image: IMAGE,
      outcome: { kind: 'policies', verdicts: [outage, second] },
    };
    const applied = applyGrace(
      verdict,
      contextWith({ release: record, sbom: { ...record, policy: 'sbom' } }),
    );
    expect(applied.graced.map((g) => g.policy)).toEqual(['release']);
    expect(summarizeAdmission(decision, [applied.verdict]).allowed).toBe(false);
  });

  it('a policy the caller does not know, or no reference, is left alone', () => {
    const verdict: ImageVerdict = {
      path: 'spec.containers[0].image',
      image: IMAGE,
      outcome: { kind: 'policies', verdicts: [{ ...outage, policy: 'unknown' }] },
    };
    expect(applyGrace(verdict, contextWith({ unknown: { ...record, policy: 'unknown' } })).graced).toEqual(
      [],
    );
    expect(applyGrace(verdict, { ...contextWith({}), reference: undefined }).verdict).toBe(verdict);
  });

  it('formats ages', () => {
    expect(
      [0, 45_000, 12 * 60_000, 3 * HOUR, 3 * HOUR + 12 * 60_000, 48 * HOUR, 50 * HOUR].map(formatAge),
    ).toEqual(['0s', '45s', '12m', '3h', '3h12m', '2d', '2d2h']);
  });
});

// Generators: every field of the question varies, around the one record that would admit.
const HEX = ['a', 'b', 'c'] as const;
const digestArb = fc.constantFrom(...HEX).map((c) => `sha256:${c.repeat(64)}`);
const repositoryArb = fc.constantFrom('registry.example/team/app', 'registry.example/team/other');
const policyArb = fc.constantFrom('release', 'sbom');
const fingerprintArb = fc.constantFrom('sha256:f1', 'sha256:f2', '');
const failureKindArb = fc.constantFrom('policy' as const, 'infrastructure' as const);
const referenceArb = fc
  .tuple(repositoryArb, fc.option(digestArb), fc.boolean())
  .map(([repo, digest, tag]) =>
    parseReference(`${repo}${tag || digest === null ? ':v1' : ''}${digest === null ? '' : `@${digest}`}`),
  );
const verdictArb = fc
  .tuple(policyArb, fc.boolean(), failureKindArb)
  .map(
    ([policy, passed, kind]): PolicyVerdict =>
      passed
        ? { policy, mode: 'enforce', passed: true }
        : { policy, mode: 'enforce', passed: false, failure: { kind, reason: 'r' } },
  );
const recordArb = fc.option(
  fc.record({
    repository: repositoryArb,
    digest: digestArb,
    policy: policyArb,
    fingerprint: fingerprintArb,
    verifiedAt: fc.integer({ min: NOW - 48 * HOUR, max: NOW + 2 * CLOCK_SKEW_MS }),
  }),
  { nil: undefined },
);
const questionArb = fc.record({
  reference: referenceArb,
  verdict: verdictArb,
  fingerprint: fingerprintArb,
  record: recordArb,
  graceMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 48 * HOUR })),
  now: fc.constant(NOW),
});

describe('properties', () => {
  test.prop([questionArb], { numRuns: 2000 })('never admits a policy failure', (q) => {
    if (!q.verdict.passed && q.verdict.failure.kind === 'policy') expect(graceFor(q).admit).toBe(false);
  });

  test.prop([questionArb], { numRuns: 2000 })('a record with another fingerprint never admits', (q) => {
    if (q.record !== undefined && q.record.fingerprint !== q.fingerprint)
      expect(graceFor(q).admit).toBe(false);
  });

  test.prop([questionArb], { numRuns: 2000 })(
    'admits only an infrastructure failure of a digest, on a record of that image, policy and fingerprint, within the grace period',
    (q) => {
      const decision = graceFor(q);
      if (!decision.admit) return;
      expect(q.verdict.passed).toBe(false);
      if (q.verdict.passed) return;
      expect(q.verdict.failure.kind).toBe('infrastructure');
      expect(q.reference.digest).toBeDefined();
      expect(q.record?.digest).toBe(q.reference.digest);
      expect(q.record?.repository).toBe(repositoryOf(q.reference));
      expect(q.record?.policy).toBe(q.verdict.policy);
      expect(q.record?.fingerprint).toBe(q.fingerprint);
      expect(q.graceMs).toBeGreaterThan(0);
      expect(decision.ageMs).toBeLessThanOrEqual(q.graceMs);
    },
  );

  test.prop(
    [
      fc.array(fc.tuple(verdictArb, recordArb), { minLength: 1, maxLength: 3 }),
      referenceArb,
      fc.integer({ min: 0, max: 48 * HOUR }),
    ],
    { numRuns: 1000 },
  )('applyGrace leaves every policy failure and every pass as it was', (pairs, reference, graceMs) => {
    const verdicts = pairs.map(([v], i) => ({ ...v, policy: `p${i}` }));
    const records = new Map(pairs.map(([, r], i) => [`p${i}`, r && { ...r, policy: `p${i}` }]));
    const image: ImageVerdict = {
      path: 'p',
      image: reference.original,
      outcome: { kind: 'policies', verdicts },
    };
    const applied = applyGrace(image, {
      reference,
      now: NOW,
      policy: () => ({ fingerprint: 'sha256:f1', graceMs }),
      record: (policy) => records.get(policy),
    });
    const after = applied.verdict.outcome.kind === 'policies' ? applied.verdict.outcome.verdicts : [];
    verdicts.forEach((before, i) => {
      const now = after[i];
      if (before.passed || before.failure.kind === 'policy') expect(now).toBe(before);
      else if (now?.passed) expect(now.grace?.failure).toBe(before.failure);
    });
    // An image with any enforced policy failure is denied, graced or not.
    const target = {
      path: 'p',
      image: reference.original,
      field: 'containers' as const,
      index: 0,
      name: 'c0',
      pointer: '',
    };
    const outcome = summarizeAdmission({ ...decision, images: [target] }, [applied.verdict]);
    if (verdicts.some((v) => !v.passed && v.failure.kind === 'policy')) expect(outcome.allowed).toBe(false);
  });
});
