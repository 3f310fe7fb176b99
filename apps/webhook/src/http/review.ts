// What the HTTP layer and the decision pipeline agree on: the endpoints, the handlers' contract
// and the deadline a review runs under. Loaded by `signet verify` and `signet audit` too, which
// judge without HTTP, so nothing here imports the HTTP stack.
import type { ImageVerdict } from '@signet/core';
import type { AdmissionAnswer, AdmissionRequest } from '@signet/k8s-types';
import type { ImageVerification } from '@signet/verifier';

export type Endpoint = 'validate' | 'mutate' | 'validate-policy';

/** Why a review's signal aborted when its time ran out (metrics count it as a timeout). */
export class ReviewTimeout extends Error {
  override readonly name = 'ReviewTimeout';
}

export interface ReviewContext {
  /** Aborted when the answer is due: stop registry calls and verification. */
  readonly signal: AbortSignal;
  /** Epoch milliseconds by which the handler must have answered. */
  readonly deadline: number;
  /** The budget the handler was given, for messages ("timed out after 9.5s"). */
  readonly budgetMs: number;
}

/** What the handler decided, and what the admission log line and metrics should say about it. */
export interface ReviewOutcome {
  /** The answer; the HTTP layer addresses it with the request's uid. */
  readonly response: AdmissionAnswer;
  /** `allowed`, `denied`, `warned`. */
  readonly decision: 'allowed' | 'denied' | 'warned';
  /** The decision rule (`scale-down`, `verified`, ...) or failure class (`policy`, `infrastructure`). */
  readonly rule: string;
  /** Human-readable reason, for the log line. */
  readonly reason?: string;
  /** The warnings the answer carries (also when it denies), for the log line. */
  readonly warnings?: readonly string[];
  /** Per verified image, what the verifier found (for `signet verify`; not sent to the API server). */
  readonly verifications?: readonly VerifiedImage[];
  /** Per image, core's verdict, settled ones (no policy matched, tag not pinned) included (for audits). */
  readonly verdicts?: readonly ImageVerdict[];
}

/**
 * What the verifier found for one image, with core's verdict: the verifier's results joined with
 * the records of the policies they are about (`checkedVerdict`), which say each policy's mode.
 */
export interface VerifiedImage extends ImageVerification {
  readonly verdict: ImageVerdict;
}

export type ReviewHandler = (
  endpoint: Endpoint,
  request: AdmissionRequest,
  context: ReviewContext,
) => Promise<ReviewOutcome>;

/**
 * Answers synchronously what needs no verification, or returns `undefined` for `handler` to answer
 * under a deadline. The cheap decisions (a scale-down must never wait) then cost no timers,
 * AbortController or promises.
 */
export type QuickHandler = (endpoint: Endpoint, request: AdmissionRequest) => ReviewOutcome | undefined;

const MAX_TIMEOUT_MS = 30_000;

/** The time the handler may use: the API server's timeout less a margin to send the answer. */
export function budgetFor(timeoutMs: number): number {
  const margin = Math.min(1000, Math.max(100, timeoutMs * 0.1));
  return Math.max(50, Math.min(timeoutMs, MAX_TIMEOUT_MS) - margin);
}
