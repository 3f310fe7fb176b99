import { describe, expect, it } from 'vitest';
import { type AdmissionDecision, decideAdmission, type VerifyDecision } from '../src/decide.js';
import { InvalidReferenceError } from '../src/errors.js';
import { mutatingResponse, summarizeAdmission, validatingResponse } from '../src/response.js';
import type { ImageOutcome, ImageVerdict, PolicyVerdict } from '../src/verdict.js';
import { objectOf, podSpec, requestFor } from './support/workloads.js';

const APP = 'registry.example/app@sha256:abcd';
const decision = decideAdmission(
  requestFor(
    'Deployment',
    'CREATE',
    objectOf('Deployment', {
      spec: {
        containers: [
          { name: 'app', image: APP },
          { name: 'side', image: 'side:1' },
        ],
      },
    }),
  ),
) as VerifyDecision;
const [app, side] = decision.images.map((t) => t.path) as [string, string];

const verdict = (path: string, image: string, outcome: ImageOutcome): ImageVerdict => ({
  path,
  image,
  outcome,
});
const policies = (...verdicts: PolicyVerdict[]): ImageOutcome => ({ kind: 'policies', verdicts });
const passed = (policy: string, mode: 'enforce' | 'warn' = 'enforce'): PolicyVerdict => ({
  policy,
  mode,
  passed: true,
  authority: 'a',
});
const failed = (
  policy: string,
  mode: 'enforce' | 'warn',
  reason: string,
  cause?: unknown,
  kind: 'policy' | 'infrastructure' = 'policy',
): PolicyVerdict => ({
  policy,
  mode,
  passed: false,
  failure: cause === undefined ? { kind, reason } : { kind, reason, cause },
});
const sideOk = verdict(side, 'side:1', policies(passed('side')));

describe('validating response', () => {
  it('denies in the contract format: field path, image, policy, mode, reason and cause', () => {
    const outcome = summarizeAdmission(decision, [
      verdict(
        app,
        APP,
        policies(
          failed(
            'release',
            'enforce',
            'no valid signature: 2 found, 0 verified',
            new Error('signature does not match key "release-2026"'),
          ),
        ),
      ),
      sideOk,
    ]);
    expect(validatingResponse(outcome)).toEqual({
      allowed: false,
      status: {
        status: 'Failure',
        code: 403,
        reason: 'Forbidden',
        message:
          'spec.template.spec.containers[0].image registry.example/app@sha256:abcd: policy "release" (enforce): ' +
          'no valid signature: 2 found, 0 verified (signature does not match key "release-2026")',
      },
    });
    expect(outcome.failures).toEqual([
      { path: app, image: APP, policy: 'release', mode: 'enforce', kind: 'policy', denied: true },
    ]);
  });

  it('every matching policy must pass (AND): one line per image, each failing policy in it', () => {
    const outcome = summarizeAdmission(decision, [
      verdict(
        app,
        APP,
        policies(
          passed('a'),
          failed('b', 'enforce', 'no valid signature'),
          failed('c', 'enforce', 'registry unreachable', { code: 'ETIMEDOUT' }, 'infrastructure'),
        ),
      ),
      sideOk,
    ]);
    expect(outcome.denials).toEqual([
      `${app} ${APP}: policy "b" (enforce): no valid signature; policy "c" (enforce): infrastructure failure: registry unreachable ({"code":"ETIMEDOUT"})`,
    ]);
    expect(outcome.failures.map((f) => f.kind)).toEqual(['policy', 'infrastructure']);
  });

  it('warn mode admits with one warning per failing image', () => {
    const outcome = summarizeAdmission(decision, [
      verdict(
        app,
        APP,
        policies(
          failed('w1', 'warn', 'no valid signature'),
          failed('w2', 'warn', 'identity mismatch'),
          passed('e'),
        ),
      ),
      verdict(side, 'side:1', policies(failed('w1', 'warn', 'no valid signature'))),
    ]);
    expect(validatingResponse(outcome)).toEqual({
      allowed: true,
      warnings: [
        `${app} ${APP}: policy "w1" (warn): no valid signature; policy "w2" (warn): identity mismatch`,
        `${side} side:1: policy "w1" (warn): no valid signature`,
      ],
    });
    expect(outcome.failures.every((f) => !f.denied)).toBe(true);
  });

  it('a denial still carries the warnings of warn-mode policies', () => {
    const outcome = summarizeAdmission(decision, [
      verdict(app, APP, policies(failed('e', 'enforce', 'no'), failed('w', 'warn', 'no'))),
      sideOk,
    ]);
    expect(validatingResponse(outcome)).toMatchObject({
      allowed: false,
      warnings: [`${app} ${APP}: policy "w" (warn): no`],
    });
  });

  it('no-match: deny, warn or allow', () => {
    const run = (action: 'deny' | 'warn' | 'allow') =>
      summarizeAdmission(decision, [verdict(app, APP, { kind: 'no-match', action }), sideOk]);
    expect(run('deny').denials).toEqual([
      `${app} ${APP}: no ClusterImagePolicy matches (no-match-policy: deny)`,
    ]);
    expect(run('warn')).toMatchObject({
      allowed: true,
      warnings: [`${app} ${APP}: no ClusterImagePolicy matches (no-match-policy: warn)`],
    });
    expect(run('allow')).toEqual({ allowed: true, denials: [], warnings: [], failures: [] });
  });

  it('an invalid reference is denied', () => {
    const error = new InvalidReferenceError('Bad', 'repository name "Bad" must be lowercase');
    const outcome = summarizeAdmission(decision, [
      verdict(app, APP, { kind: 'invalid-reference', error }),
      sideOk,
    ]);
    expect(outcome.denials).toEqual([
      `${app} ${APP}: invalid image reference: repository name "Bad" must be lowercase`,
    ]);
  });

  it('fails closed: a missing verdict, two verdicts, a verdict about another image, or no policy verdict', () => {
    const missing = summarizeAdmission(decision, [sideOk]);
    expect(missing.denials).toEqual([
      `${app} ${APP}: not verified: infrastructure failure: no verification result`,
    ]);
    const stale = summarizeAdmission(decision, [
      verdict(app, 'registry.example/app:other', policies(passed('p'))),
      sideOk,
    ]);
    expect(stale.allowed).toBe(false);
    const twice = summarizeAdmission(decision, [
      verdict(app, APP, policies(failed('p', 'enforce', 'no'))),
      verdict(app, APP, policies(passed('p'))),
      sideOk,
    ]);
    expect(twice.denials).toEqual([
      `${app} ${APP}: not verified: infrastructure failure: no verification result`,
    ]);
    const empty = summarizeAdmission(decision, [verdict(app, APP, policies()), sideOk]);
    expect(empty.denials).toEqual([`${app} ${APP}: not verified: infrastructure failure: no policy verdict`]);
    expect(empty.failures).toEqual([
      { path: app, image: APP, policy: undefined, mode: undefined, kind: 'infrastructure', denied: true },
    ]);
  });

  it('all passed: allowed, no warnings', () => {
    expect(
      validatingResponse(summarizeAdmission(decision, [verdict(app, APP, policies(passed('p'))), sideOk])),
    ).toEqual({ allowed: true });
  });

  it('an admitted request: allowed, with the decision warning if any', () => {
    const admitted: AdmissionDecision = {
      action: 'admit',
      rule: 'owned-scale-up',
      warning: 'scaled by owner',
    };
    expect(validatingResponse(summarizeAdmission(admitted, []))).toEqual({
      allowed: true,
      warnings: ['scaled by owner'],
    });
    expect(summarizeAdmission({ action: 'admit', rule: 'scale-down' }, [])).toEqual({
      allowed: true,
      denials: [],
      warnings: [],
      failures: [],
    });
  });

  it('keeps each line on one line and shows odd images quoted', () => {
    const odd = decideAdmission(
      requestFor(
        'Pod',
        'CREATE',
        objectOf('Pod', { spec: { containers: [{ name: 'x', image: 'bad image\nname' }] } }),
      ),
    ) as VerifyDecision;
    const outcome = summarizeAdmission(odd, [
      verdict(
        'spec.containers[0].image',
        'bad image\nname',
        policies(failed('p', 'enforce', 'multi\nline', new Error('x\ny'))),
      ),
    ]);
    expect(outcome.denials).toEqual([
      'spec.containers[0].image "bad image\\nname": policy "p" (enforce): multi line (x y)',
    ]);
  });
});

describe('mutating response', () => {
  const D = `sha256:${'d'.repeat(64)}`;
  const request = requestFor('Pod', 'CREATE', objectOf('Pod', { spec: podSpec(['alpine:3']) }));

  it('a base64 JSON patch of the planned fields', () => {
    const response = mutatingResponse(decideAdmission(request), new Map([['spec.containers[0].image', D]]));
    expect(response).toMatchObject({ allowed: true, patchType: 'JSONPatch' });
    expect(JSON.parse(Buffer.from(response.patch ?? '', 'base64').toString('utf8'))).toEqual([
      { op: 'test', path: '/spec/containers/0/image', value: 'alpine:3' },
      { op: 'replace', path: '/spec/containers/0/image', value: `alpine:3@${D}` },
    ]);
  });

  it('no patch when nothing is resolved or nothing is planned', () => {
    expect(mutatingResponse(decideAdmission(request), new Map())).toEqual({ allowed: true });
    expect(
      mutatingResponse({ action: 'admit', rule: 'scale-down' }, new Map([['spec.containers[0].image', D]])),
    ).toEqual({ allowed: true });
  });
});
