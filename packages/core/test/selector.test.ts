import type { LabelSelector, LabelSelectorRequirement } from '@signet/k8s-types';
import { describe, expect, it } from 'vitest';
import { InvalidPolicyError } from '../src/errors.js';
import { compileSelector } from '../src/selector.js';

const labels = { app: 'shop', tier: 'web', empty: '' };

describe('compileSelector', () => {
  const cases: [string, LabelSelector, boolean][] = [
    ['empty selector matches everything', {}, true],
    ['matchLabels all present', { matchLabels: { app: 'shop', tier: 'web' } }, true],
    ['matchLabels one different', { matchLabels: { app: 'shop', tier: 'db' } }, false],
    ['matchLabels missing key', { matchLabels: { team: 'a' } }, false],
    ['matchLabels empty value', { matchLabels: { empty: '' } }, true],
    ['In', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['web', 'api'] }] }, true],
    ['In, other value', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['db'] }] }, false],
    ['In, missing key', { matchExpressions: [{ key: 'team', operator: 'In', values: ['a'] }] }, false],
    ['NotIn', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] }, true],
    [
      'NotIn, listed value',
      { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['web'] }] },
      false,
    ],
    ['NotIn, missing key', { matchExpressions: [{ key: 'team', operator: 'NotIn', values: ['a'] }] }, true],
    ['Exists', { matchExpressions: [{ key: 'empty', operator: 'Exists' }] }, true],
    ['Exists, missing', { matchExpressions: [{ key: 'team', operator: 'Exists', values: [] }] }, false],
    ['DoesNotExist', { matchExpressions: [{ key: 'team', operator: 'DoesNotExist' }] }, true],
    ['DoesNotExist, present', { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, false],
    [
      'labels AND expressions',
      { matchLabels: { app: 'shop' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['db'] }] },
      false,
    ],
    [
      'an inherited property is not a label',
      { matchExpressions: [{ key: 'toString', operator: 'Exists' }] },
      false,
    ],
  ];
  for (const [what, selector, matches] of cases) {
    it(what, () => expect(compileSelector(selector)(labels)).toBe(matches));
  }

  const invalid: [string, LabelSelectorRequirement, string][] = [
    ['In without values', { key: 'a', operator: 'In', values: [] }, 'operator In needs at least one value'],
    ['NotIn without values', { key: 'a', operator: 'NotIn' }, 'operator NotIn needs at least one value'],
    [
      'Exists with values',
      { key: 'a', operator: 'Exists', values: ['x'] },
      'operator Exists takes no values',
    ],
    ['an unknown operator', { key: 'a', operator: 'Near' as 'In' }, 'unknown operator "Near"'],
  ];
  for (const [what, requirement, problem] of invalid) {
    it(`rejects ${what}`, () => {
      const compile = () =>
        compileSelector({ matchExpressions: [{ key: 'ok', operator: 'Exists' }, requirement] });
      expect(compile).toThrow(InvalidPolicyError);
      expect(compile).toThrow(expect.objectContaining({ code: 'INVALID_SELECTOR', problem }));
      expect(compile).toThrow(
        expect.objectContaining({ path: expect.stringMatching(/^matchExpressions\[1\]/) }),
      );
    });
  }
});
