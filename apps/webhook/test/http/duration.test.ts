import { describe, expect, it } from 'vitest';
import { budgetFor } from '../../src/http/admission-app.js';
import { parseGoDuration } from '../../src/http/duration.js';

describe('timeouts', () => {
  it('parses Go durations and keeps a margin to answer', () => {
    expect(parseGoDuration('10s')).toBe(10_000);
    expect(parseGoDuration('1m0s')).toBe(60_000);
    expect(parseGoDuration('1.5s')).toBe(1500);
    expect(parseGoDuration('250ms')).toBe(250);
    expect(parseGoDuration('10')).toBeUndefined();
    expect(parseGoDuration('')).toBeUndefined();
    expect(parseGoDuration('10x')).toBeUndefined();
    expect(budgetFor(10_000)).toBe(9000);
    expect(budgetFor(30_000)).toBe(29_000);
    expect(budgetFor(60_000)).toBe(29_000);
    expect(budgetFor(1000)).toBe(900);
  });
});
