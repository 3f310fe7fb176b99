import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { isSemanticallyEmpty, semanticEqual } from '../src/equality.js';
import { reshape } from './support/reshape.js';

describe('semanticEqual', () => {
  const equal: [string, unknown, unknown][] = [
    ['missing and null', { a: 1 }, { a: 1, b: null }],
    ['missing and empty list', { a: 1, b: [] }, { a: 1 }],
    ['missing and empty map', {}, { b: {} }],
    ['null and empty list', { b: null }, { b: [] }],
    ['empty list and empty map', { b: [] }, { b: {} }],
    ['a map of empty values and missing', { resources: { limits: {}, requests: null } }, {}],
    ['key order', { a: 1, b: { c: 2, d: [3] } }, { b: { d: [3], c: 2 }, a: 1 }],
    ['nested lists', [[{ a: 1 }], []], [[{ a: 1 }], null]],
    ['undefined and null at the root', undefined, null],
    ['same strings', 'x', 'x'],
  ];
  for (const [what, a, b] of equal) {
    it(`equal: ${what}`, () => {
      expect(semanticEqual(a, b)).toBe(true);
      expect(semanticEqual(b, a)).toBe(true);
    });
  }

  const different: [string, unknown, unknown][] = [
    ['a value and missing', { a: 1 }, {}],
    ['a value and null', { a: '' }, { a: null }],
    ['false and missing', { a: false }, {}],
    ['zero and missing', { a: 0 }, {}],
    ['list order', [1, 2], [2, 1]],
    ['list length', [{}], []],
    ['a string and a number', { a: '1' }, { a: 1 }],
    ['a list and a non-empty map', { a: [1] }, { a: { 0: 1 } }],
    ['a map and a primitive', { a: {} }, { a: 0 }],
    ['nested difference', { a: { b: { c: 1 } } }, { a: { b: { c: 2 } } }],
    ['a key only in the second map', { a: 1 }, { a: 1, b: 2 }],
  ];
  for (const [what, a, b] of different) {
    it(`different: ${what}`, () => {
      expect(semanticEqual(a, b)).toBe(false);
      expect(semanticEqual(b, a)).toBe(false);
    });
  }

  it('a __proto__ key is compared as data, not as the prototype', () => {
    const withProto = JSON.parse('{"__proto__": {"x": 1}}') as unknown;
    expect(semanticEqual(withProto, {})).toBe(false);
    expect(semanticEqual({}, withProto)).toBe(false);
    expect(semanticEqual(JSON.parse('{"__proto__": {}}'), {})).toBe(true);
  });

  test.prop([fc.jsonValue(), fc.integer()])(
    'is unchanged by respelling (key order, null, missing, empty)',
    (value, seed) => {
      expect(semanticEqual(value, reshape(value, seed))).toBe(true);
    },
  );

  test.prop([fc.jsonValue(), fc.jsonValue()])('is symmetric', (a, b) => {
    expect(semanticEqual(a, b)).toBe(semanticEqual(b, a));
  });

  test.prop([fc.jsonValue()])('agrees with JSON identity on values without empties', (value) => {
    const text = JSON.stringify(value);
    expect(semanticEqual(value, JSON.parse(text))).toBe(true);
  });
});

describe('isSemanticallyEmpty', () => {
  it.each([[undefined], [null], [[]], [{}], [{ a: null, b: { c: [] } }]])('empty: %j', (value) => {
    expect(isSemanticallyEmpty(value)).toBe(true);
  });
  it.each([[0], [''], [false], [[null]], [{ a: 0 }]])('not empty: %j', (value) => {
    expect(isSemanticallyEmpty(value)).toBe(false);
  });
});
