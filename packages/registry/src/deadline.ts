// One registry call's time budget: the caller's AbortSignal and an absolute deadline merged into a
// single signal that every fetch, body read and backoff sleep of the call listens to. Without it a
// body that drips one byte a second would hold an admission request forever.
import type { Clock } from './clock.js';
import { RegistryError, type RegistryErrorContext } from './errors.js';

/** What every registry call takes: a way to cancel it and a time by which it must be done. */
export interface RegistryCall {
  readonly signal: AbortSignal;
  /** Absolute time in milliseconds on the client's clock (`clock.now() + 5_000`). */
  readonly deadline: number;
}

/** setTimeout's limit; a deadline further away than ~24 days is as good as none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class CallBudget {
  readonly signal: AbortSignal;
  readonly #call: RegistryCall;
  readonly #clock: Clock;
  readonly #timer: AbortController = new AbortController();
  readonly #handle: NodeJS.Timeout;

  constructor(call: RegistryCall, clock: Clock) {
    this.#call = call;
    this.#clock = clock;
    const remaining = Math.min(Math.max(0, call.deadline - clock.now()), MAX_TIMER_MS);
    this.#handle = setTimeout(() => this.#timer.abort(new Error('deadline passed')), remaining);
    this.signal = AbortSignal.any([call.signal, this.#timer.signal]);
  }

  /** Milliseconds left before the deadline (negative once it has passed). */
  remaining(): number {
    return this.#call.deadline - this.#clock.now();
  }

  /** True once the caller cancelled or the deadline passed. */
  interrupted(): boolean {
    return this.signal.aborted || this.remaining() <= 0;
  }

  /** Throws `ABORTED` or `TIMEOUT` when the call may not go on. */
  check(context: RegistryErrorContext): void {
    if (this.signal.aborted || this.remaining() <= 0) throw this.translate(undefined, context);
  }

  /**
   * The registry error for something that interrupted the call: the caller's abort wins, then the
   * deadline; a `RegistryError` passes through; anything else means the connection failed.
   */
  translate(error: unknown, context: RegistryErrorContext): RegistryError {
    if (this.#call.signal.aborted) {
      return new RegistryError('ABORTED', context, 'the request was cancelled', {
        cause: this.#call.signal.reason,
      });
    }
    if (this.#timer.signal.aborted || this.remaining() <= 0) {
      return new RegistryError('TIMEOUT', context, 'the deadline passed before the registry answered', {
        cause: error,
      });
    }
    if (error instanceof RegistryError) return error;
    return new RegistryError('UNREACHABLE', context, `the connection failed: ${messageOf(error)}`, {
      cause: error,
    });
  }

  dispose(): void {
    clearTimeout(this.#handle);
  }
}

/** The innermost message of an error chain (undici hides the socket error in `cause`). */
export function messageOf(error: unknown): string {
  let current: unknown = error;
  let message = String(error);
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    message = current.message;
    current = current.cause;
  }
  return message;
}
