// The state the admission middleware share: the app's settings, and one review's exchange, which
// each middleware of the chain (observe, body, parse, decide) fills in for the next.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdmissionRequest } from '@signet/k8s-types';
import type { Logger } from '../logger.js';
import type { SignetMetrics } from '../metrics.js';
import type { BodyLimits, ByteBudget, HeldBody } from './body.js';
import type { BodyCheckPool } from './body-check.js';
import type { Endpoint, QuickHandler, ReviewHandler } from './review.js';
import type { SerialQueue } from './serial-queue.js';

/** What the admission app was made with, shared by its middleware. */
export interface AppSettings {
  readonly handler: ReviewHandler;
  readonly quickHandler: QuickHandler | undefined;
  readonly policyHandler: ReviewHandler | undefined;
  readonly logger: Logger;
  /** Where the per-review `admission` line goes. */
  readonly admissionLog: Logger;
  readonly metrics: SignetMetrics;
  readonly limits: BodyLimits;
  readonly budget: ByteBudget;
  /** Bodies above this size are checked in a worker before the event loop parses them. */
  readonly heavyBytes: number;
  readonly bodyCheck: BodyCheckPool;
  /** Heavy bodies a worker passed, parsed on the event loop one per turn. */
  readonly heavyParse: SerialQueue;
  readonly defaultTimeoutMs: number;
  readonly graceMs: number;
  readonly now: () => number;
  /** After `drain()`: every answer closes its connection. */
  draining: boolean;
}

/** One review on its way through the chain. */
export class Exchange {
  body: HeldBody | undefined;
  request: AdmissionRequest | undefined;
  #finished = false;
  readonly #stopTimer: () => void;

  constructor(
    readonly endpoint: Endpoint,
    readonly started: number,
    readonly settings: AppSettings,
    stopTimer: () => void,
  ) {
    this.#stopTimer = stopTimer;
  }

  /** Gives back the body's share of the budget (once). */
  releaseBody(): void {
    this.body?.release();
  }

  /** The review is answered (or abandoned): the timer and the in-flight gauge stop counting it. */
  finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.releaseBody();
    this.#stopTimer();
    this.settings.metrics.inFlight.dec();
  }
}

/**
 * A middleware of the admission chain. It uses only Node's own request and response API, none of
 * the helpers express adds (`req.query`, `res.json`: see ADR 0017 for why).
 */
export type Middleware = (
  req: IncomingMessage,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void | Promise<void>;

export type ErrorMiddleware = (
  error: unknown,
  req: IncomingMessage,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void;

const EXCHANGE = Symbol('signet.exchange');

type WithExchange = ServerResponse & { [EXCHANGE]?: Exchange };

/** Puts `exchange` on the response, for the middleware after `observe`. */
export function attachExchange(res: ServerResponse, exchange: Exchange): void {
  (res as WithExchange)[EXCHANGE] = exchange;
}

/** The exchange `observe` put on the response (`undefined` before it ran). */
export function exchangeOf(res: ServerResponse): Exchange {
  return (res as WithExchange)[EXCHANGE] as Exchange;
}
