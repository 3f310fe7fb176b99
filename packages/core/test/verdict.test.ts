import { describe, expect, it } from 'vitest';
import { describeCause } from '../src/describe.js';
import { type AuthorityResult, policyVerdict } from '../src/verdict.js';

const release = { name: 'release', mode: 'enforce' as const };
const fail = (
  authority: string,
  kind: 'policy' | 'infrastructure',
  reason: string,
  cause?: unknown,
): AuthorityResult => ({
  authority,
  passed: false,
  failure: cause === undefined ? { kind, reason } : { kind, reason, cause },
});

describe('policyVerdict: any authority of a policy may pass (OR)', () => {
  it('passes with the first authority that passed', () => {
    expect(
      policyVerdict(release, [
        fail('a', 'policy', 'no'),
        { authority: 'b', passed: true },
        { authority: 'c', passed: true },
      ]),
    ).toEqual({
      policy: 'release',
      mode: 'enforce',
      passed: true,
      authority: 'b',
    });
  });

  it('passes a policy without authorities, as policy-controller does', () => {
    expect(policyVerdict({ name: 'p', mode: 'warn' }, [])).toEqual({
      policy: 'p',
      mode: 'warn',
      passed: true,
    });
  });

  it('one failing authority: its failure as it is', () => {
    const cause = new Error('signature does not match key "release-2026"');
    expect(policyVerdict(release, [fail('key', 'policy', 'no valid signature', cause)])).toEqual({
      policy: 'release',
      mode: 'enforce',
      passed: false,
      failure: { kind: 'policy', reason: 'no valid signature', cause },
    });
  });

  it('all failing: policy failure, with every authority and cause kept', () => {
    const verdict = policyVerdict(release, [
      fail('key', 'policy', 'no valid signature', new Error('bad key')),
      fail('keyless', 'policy', 'identity mismatch'),
    ]);
    expect(verdict).toMatchObject({
      passed: false,
      failure: { kind: 'policy', reason: 'none of 2 authorities passed' },
    });
    const cause = verdict.passed ? undefined : verdict.failure.cause;
    expect(cause).toBeInstanceOf(AggregateError);
    expect(describeCause(cause)).toBe(
      'authority "key": no valid signature: bad key; authority "keyless": identity mismatch',
    );
  });

  it('any authority that could not be checked makes it an infrastructure failure', () => {
    const verdict = policyVerdict(release, [
      fail('key', 'policy', 'no'),
      fail('keyless', 'infrastructure', 'rekor unreachable'),
    ]);
    expect(verdict).toMatchObject({ passed: false, failure: { kind: 'infrastructure' } });
  });
});
