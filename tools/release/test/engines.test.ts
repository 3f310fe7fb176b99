import { describe, expect, it } from 'vitest';
import { satisfiesEngines } from '../src/engines.ts';

describe('satisfiesEngines', () => {
  it('reads the ranges the packages declare', () => {
    const libraries = '^20.19.0 || >=22.12.0';
    expect(satisfiesEngines('20.20.2', libraries)).toBe(true);
    expect(satisfiesEngines('20.18.3', libraries)).toBe(false);
    expect(satisfiesEngines('22.11.0', libraries)).toBe(false);
    expect(satisfiesEngines('26.10.0', libraries)).toBe(true);
    const sigstore = '^22.22.2 || ^24.15.0 || >=26.0.0';
    expect(satisfiesEngines('20.20.2', sigstore)).toBe(false);
    expect(satisfiesEngines('22.23.5', sigstore)).toBe(true);
    expect(satisfiesEngines('24.14.0', sigstore)).toBe(false);
    expect(satisfiesEngines('24.22.3', sigstore)).toBe(true);
    expect(satisfiesEngines('26.0.0', sigstore)).toBe(true);
    expect(satisfiesEngines('26.10.0', '>=26')).toBe(true);
    expect(() => satisfiesEngines('22.0.0', '~22.1')).toThrow(/not understood/);
  });
});
