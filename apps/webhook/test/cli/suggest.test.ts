import { describe, expect, it } from 'vitest';
import { closest, didYouMean, editDistance } from '../../src/cli/suggest.js';

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and adjacent swaps as one edit each', () => {
    expect(editDistance('policy', 'policy')).toBe(0);
    expect(editDistance('polcy', 'policy')).toBe(1);
    expect(editDistance('polciy', 'policy')).toBe(1);
    expect(editDistance('pilicy', 'policy')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});

describe('closest', () => {
  const flags = [
    '--policy-file',
    '--policy',
    '--output',
    '--insecure-registry',
    '--namespace',
    '--signet-namespace',
  ];

  it('finds the nearest within a third of the length, or the one word a prefix extends', () => {
    expect(closest('--polcy', flags)).toBe('--policy');
    expect(closest('--ouptut', flags)).toBe('--output');
    expect(closest('--insecure', flags)).toBe('--insecure-registry');
    expect(closest('--namespase', flags)).toBe('--namespace');
    expect(closest('vrify', ['serve', 'verify', 'audit', 'migrate'])).toBe('verify');
  });

  it('suggests nothing far off', () => {
    expect(closest('--color', flags)).toBeUndefined();
    expect(closest('x', ['serve', 'verify'])).toBeUndefined();
    expect(didYouMean('zz', ['bash', 'zsh'])).toBe('');
    expect(didYouMean('bsh', ['bash', 'zsh'])).toBe(' (did you mean bash?)');
  });
});
