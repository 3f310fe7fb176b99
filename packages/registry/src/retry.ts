// When to try a request again and how long to wait first. Registries answer 429 under load and 5xx
// during rollouts; a retry a moment later usually works. Waits are spread with jitter so that many
// webhook replicas do not retry in lockstep, and never go past the call's deadline.

export interface RetryPolicy {
  /** Attempts per request, the first one included. */
  readonly maxAttempts: number;
  /** The first backoff; each further one doubles, up to `maxDelayMs`. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 4_000 };

/** 429 Too Many Requests and every 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

/**
 * The wait before attempt `attempt + 1` (`attempt` counts from 1): half of the exponential step
 * plus a random part of the other half, so a wait is never zero and never more than the step.
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(step / 2 + (step / 2) * random());
}

/**
 * `Retry-After` in milliseconds from `now`: delay-seconds or an HTTP date. `undefined` when absent
 * or unreadable (the header is advice; an unreadable one falls back to backoff).
 */
export function parseRetryAfter(header: string | null, now: number): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
