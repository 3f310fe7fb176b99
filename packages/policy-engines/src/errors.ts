export type PolicyEngineErrorCode =
  /**
   * The language's engine package (`@signet/policy-engine-cue`, `@signet/policy-engine-rego`) is
   * not installed beside this one.
   */
  | 'ENGINE_NOT_INSTALLED'
  /** The engine does not load: its package or WebAssembly file is broken, missing or of another version. */
  | 'ENGINE_UNAVAILABLE'
  /** The engine did not answer within the deadline: the evaluation was stopped. */
  | 'ENGINE_TIMEOUT'
  /** The engine stopped (out of memory, a crash); it is restarted for the next request. */
  | 'ENGINE_CRASHED'
  /** Too many requests are waiting for the engine. */
  | 'ENGINE_BUSY'
  /**
   * The caller gave up (its `signal` aborted): the request was dropped while it waited, or the
   * worker running it was stopped, so that nothing runs for a caller that was answered.
   */
  | 'ENGINE_CANCELLED'
  /** The engines were closed. */
  | 'ENGINE_CLOSED';

/**
 * A failure of the engine itself, never of the policy: callers treat it as an infrastructure
 * failure (the admission is refused, not judged).
 */
export class PolicyEngineError extends Error {
  override readonly name = 'PolicyEngineError';
  readonly code: PolicyEngineErrorCode;

  constructor(code: PolicyEngineErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

/** The policy's source does not compile (a syntax or type error, as the engine words it). */
export class PolicySourceError extends Error {
  override readonly name = 'PolicySourceError';
}
