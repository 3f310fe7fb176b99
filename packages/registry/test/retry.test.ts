import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_RETRY_POLICY, isRetryableStatus, parseRetryAfter } from '../src/retry.js';

describe('retry policy', () => {
  it.each([
    [429, true],
    [500, true],
    [503, true],
    [599, true],
    [404, false],
    [401, false],
    [200, false],
    [600, false],
  ])('status %i retryable: %s', (status, expected) => {
    expect(isRetryableStatus(status)).toBe(expected);
  });

  it('doubles the step up to the maximum, half fixed and half jitter', () => {
    const policy = { maxAttempts: 10, baseDelayMs: 100, maxDelayMs: 1_000 };
    expect([1, 2, 3, 4, 5].map((attempt) => backoffDelay(attempt, policy, () => 0))).toEqual([
      50, 100, 200, 400, 500,
    ]);
    expect(backoffDelay(1, policy, () => 0.999)).toBe(100);
    expect(DEFAULT_RETRY_POLICY.maxAttempts).toBeGreaterThan(1);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter(' 7 ', now)).toBe(7_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('later', now)).toBeUndefined();
  });
});
