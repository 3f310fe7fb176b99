// The admission endpoints, routed by express: `POST /validate`, `POST /mutate` and
// `POST /validate-policy` (Signet's own policy objects) taking `admission.k8s.io/v1`
// AdmissionReviews. Each runs one middleware per concern, in the manner of Kyverno's handlers:
//
//   observe (admission-log.ts)     timer, in-flight gauge, the review's exchange
//   readReviewBody (body.ts)       size limit, byte budget, body deadline
//   parseReviewBody (review-parser.ts)  small bodies at once, large ones checked in a worker first
//   decide (decide.ts)             the quick path, else the handler under the `?timeout=` deadline
//
// Every answer is an AdmissionReview carrying the request uid (empty when it could not be read),
// errors included. Body handling stays Signet's, not express's parsers (ADR 0017 says why).
// `signet verify` and `signet audit` never load this module: express is paid for by `serve` only.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AdmissionReviewError, admissionReviewFor } from '@signet/k8s-types';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import type { Logger } from '../logger.js';
import type { SignetMetrics } from '../metrics.js';
import { observe } from './admission-log.js';
import { ByteBudget } from './body.js';
import { type BodyCheckOptions, BodyCheckPool } from './body-check.js';
import { decide } from './decide.js';
import { type AppSettings, type ErrorMiddleware, exchangeOf, type Middleware } from './exchange.js';
import { failure, send } from './respond.js';
import type { Endpoint, QuickHandler, ReviewHandler } from './review.js';
import { readReviewBody } from './review-body.js';
import { parseReviewBody } from './review-parser.js';
import { SerialQueue } from './serial-queue.js';

export { kindLabel } from './admission-log.js';
export {
  budgetFor,
  type Endpoint,
  type QuickHandler,
  type ReviewContext,
  type ReviewHandler,
  type ReviewOutcome,
  ReviewTimeout,
} from './review.js';

export interface AdmissionAppOptions {
  readonly handler: ReviewHandler;
  /** Tried first on `/validate` and `/mutate`; see {@link QuickHandler}. */
  readonly quickHandler?: QuickHandler;
  /** Answers `/validate-policy`; without it that path is not served (404). */
  readonly policyHandler?: ReviewHandler;
  readonly logger: Logger;
  /** Where the per-review `admission` line goes (default `logger`); see `createLoggers`. */
  readonly admissionLog?: Logger;
  readonly metrics: SignetMetrics;
  /** Largest accepted body (default {@link DEFAULT_BODY_LIMIT}). */
  readonly bodyLimitBytes?: number;
  /** Bytes of bodies being read or waiting to be parsed, across all requests (default 32 MiB); beyond, 503. */
  readonly inFlightBodyBytes?: number;
  /** How long a body may take to arrive (default 5 s); beyond, 408. */
  readonly bodyTimeoutMs?: number;
  /** Bodies larger than this are checked in a worker thread before they are parsed (default 256 KiB). */
  readonly heavyBodyBytes?: number;
  /** Heavy bodies waiting for a worker, and waiting to be parsed (default 32 each); beyond, 503. */
  readonly maxQueuedHeavy?: number;
  /** The worker threads that check heavy bodies (their number, deadline, bound on JSON values). */
  readonly bodyCheck?: Omit<BodyCheckOptions, 'maxQueued'>;
  /** Timeout when the API server sends none (default 10 s). */
  readonly defaultTimeoutMs?: number;
  /** Extra time after the handler's deadline before the server answers for it (default 250 ms). */
  readonly graceMs?: number;
  readonly now?: () => number;
}

/**
 * An AdmissionReview carries the object and the old object; etcd keeps each under 1.5 MiB by
 * default, and their JSON with the review around them stays well inside 4 MiB.
 */
export const DEFAULT_BODY_LIMIT = 4 * 1024 * 1024;

/**
 * An express application or Router as Node's server calls it, with the final callback express
 * takes (an application makes its own per request otherwise; the chains here end in a 404 and an
 * error handler).
 */
export type ExpressHandle = (
  req: IncomingMessage,
  res: ServerResponse,
  done: (error?: unknown) => void,
) => void;

/** The admission request listener, the switch that makes it ask clients to reconnect, and its stop. */
export interface AdmissionApp {
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** From now on every answer closes its connection, so clients reconnect through the Service. */
  drain(): void;
  /** Stops the body-check workers (after the servers closed). */
  close(): Promise<void>;
}

export function createAdmissionApp(options: AdmissionAppOptions): AdmissionApp {
  const maxQueued = options.maxQueuedHeavy ?? 32;
  const settings: AppSettings = {
    handler: options.handler,
    quickHandler: options.quickHandler,
    policyHandler: options.policyHandler,
    logger: options.logger,
    admissionLog: options.admissionLog ?? options.logger,
    metrics: options.metrics,
    limits: {
      maxBytes: options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT,
      timeoutMs: options.bodyTimeoutMs ?? 5000,
    },
    budget: new ByteBudget(options.inFlightBodyBytes ?? 32 * 1024 * 1024),
    heavyBytes: options.heavyBodyBytes ?? 256 * 1024,
    bodyCheck: new BodyCheckPool({ ...options.bodyCheck, maxQueued }),
    heavyParse: new SerialQueue(maxQueued),
    defaultTimeoutMs: options.defaultTimeoutMs ?? 10_000,
    graceMs: options.graceMs ?? 250,
    now: options.now ?? Date.now,
    draining: false,
  };
  const app = express();
  // No X-Powered-By, no ETags; paths match exactly, as the API server sends them.
  app.disable('x-powered-by');
  app.disable('etag');
  app.enable('strict routing');
  app.enable('case sensitive routing');
  const chain = (endpoint: Endpoint): Middleware[] => [
    observe(endpoint, settings),
    readReviewBody,
    parseReviewBody,
    decide,
  ];
  app.post('/validate', ...routed(chain('validate')));
  app.post('/mutate', ...routed(chain('mutate')));
  if (options.policyHandler) app.post('/validate-policy', ...routed(chain('validate-policy')));
  app.use(...routed([notFound(settings)]));
  app.use(routedError(internalError(settings)));
  const handle = app as unknown as ExpressHandle;
  return {
    // What reaches express's final callback went wrong twice: the connection is dropped.
    listener: (req, res) => handle(req, res, () => res.destroy()),
    drain: () => {
      settings.draining = true;
    },
    close: () => settings.bodyCheck.close(),
  };
}

/** The chain uses only Node's own request and response API (express's types say its subclasses). */
function routed(middleware: Middleware[]): RequestHandler[] {
  return middleware as unknown as RequestHandler[];
}

function routedError(middleware: ErrorMiddleware): ErrorRequestHandler {
  return middleware as unknown as ErrorRequestHandler;
}

/** Any other path or method: a JSON 404 that names what was asked. */
function notFound(settings: AppSettings): Middleware {
  return (req, res) =>
    send(res, settings, 404, { error: `no such endpoint: ${req.method} ${(req.url ?? '').split('?')[0]}` });
}

/** What no middleware answered because it threw: a 500 AdmissionReview, with the uid when known. */
function internalError(settings: AppSettings): ErrorMiddleware {
  return (error, _req, res) => {
    const exchange = exchangeOf(res);
    const uid = exchange?.request?.uid ?? (error instanceof AdmissionReviewError ? (error.uid ?? '') : '');
    const message = `internal error: ${error instanceof Error ? error.message : String(error)}`;
    settings.logger.error({ endpoint: exchange?.endpoint, uid, err: error }, message);
    send(res, settings, 500, admissionReviewFor(failure(uid, 500, message)));
    exchange?.finish();
  };
}
