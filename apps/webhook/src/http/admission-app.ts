import {
  type AdmissionAnswer,
  type AdmissionRequest,
  type AdmissionResponse,
  AdmissionReviewError,
  admissionReviewFor,
  FieldError,
  parseAdmissionReviewJson,
} from '@signet/k8s-types';
import type { ImageVerification } from '@signet/verifier';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../logger.js';
import type { SignetMetrics } from '../metrics.js';
import { parseGoDuration } from './duration.js';

export type Endpoint = 'validate' | 'mutate';

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
  /** Per verified image, what the verifier found (for `signet verify`; not sent to the API server). */
  readonly verifications?: readonly ImageVerification[];
}

export type ReviewHandler = (
  endpoint: Endpoint,
  request: AdmissionRequest,
  context: ReviewContext,
) => Promise<ReviewOutcome>;

export interface AdmissionAppOptions {
  readonly handler: ReviewHandler;
  readonly logger: Logger;
  readonly metrics: SignetMetrics;
  /** Largest accepted body (default 10 MiB; UPDATEs carry two objects). */
  readonly bodyLimitBytes?: number;
  /** Timeout when the API server sends none (default 10 s). */
  readonly defaultTimeoutMs?: number;
  /** Extra time after the handler's deadline before the server answers for it (default 250 ms). */
  readonly graceMs?: number;
  readonly now?: () => number;
}

const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024;
const MAX_TIMEOUT_MS = 30_000;

/** The time the handler may use: the API server's timeout less a margin to send the answer. */
export function budgetFor(timeoutMs: number): number {
  const margin = Math.min(1000, Math.max(100, timeoutMs * 0.1));
  return Math.max(50, Math.min(timeoutMs, MAX_TIMEOUT_MS) - margin);
}

function failureResponse(uid: string, code: number, message: string): AdmissionResponse {
  return {
    uid,
    allowed: false,
    status: { code, message, reason: code === 400 ? 'BadRequest' : 'Forbidden' },
  };
}

/**
 * The HTTPS admission endpoints: `POST /validate` and `POST /mutate` taking
 * `admission.k8s.io/v1` AdmissionReviews. Every answer is an AdmissionReview carrying the request
 * uid (empty when it could not be read), errors included; malformed reviews get 400 naming the
 * field, oversized bodies 413. Each review is answered within the API server's `?timeout=`.
 */
export function createAdmissionApp(options: AdmissionAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const limit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT;
  const raw = express.raw({ type: () => true, limit, inflate: false });
  for (const endpoint of ['validate', 'mutate'] as const) {
    app.post(`/${endpoint}`, raw, (req, res) => {
      void answer(endpoint, req, res, options);
    });
  }
  app.use((req: Request, res: Response) => {
    res.status(404).json({ error: `no such endpoint: ${req.method} ${req.path}` });
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = httpStatusOf(error);
    const message =
      status === 413
        ? `request body is larger than ${limit} bytes`
        : `cannot read the request body: ${(error as Error).message ?? String(error)}`;
    options.logger.warn({ status, err: error }, 'rejected an admission request body');
    options.metrics.admissions.inc({
      endpoint: 'unknown',
      decision: 'error',
      rule: `http-${status}`,
      kind: 'unknown',
    });
    res.status(status).json(admissionReviewFor(failureResponse('', status, message)));
  });
  return app;
}

function httpStatusOf(error: unknown): number {
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' && status >= 400 && status < 600 ? status : 400;
}

async function answer(
  endpoint: Endpoint,
  req: Request,
  res: Response,
  options: AdmissionAppOptions,
): Promise<void> {
  const now = options.now ?? Date.now;
  const started = now();
  const stopTimer = options.metrics.admissionDuration.startTimer({ endpoint });
  options.metrics.inFlight.inc();
  try {
    const body: unknown = req.body;
    const bytes = Buffer.isBuffer(body) ? body : Buffer.alloc(0);
    let request: AdmissionRequest;
    try {
      request = parseAdmissionReviewJson(bytes).request;
    } catch (error) {
      const reviewError = error as AdmissionReviewError;
      const uid = error instanceof AdmissionReviewError ? (reviewError.uid ?? '') : '';
      options.logger.warn({ endpoint, uid, err: error }, `malformed AdmissionReview: ${reviewError.message}`);
      options.metrics.admissions.inc({ endpoint, decision: 'error', rule: 'malformed', kind: 'unknown' });
      res
        .status(400)
        .json(
          admissionReviewFor(failureResponse(uid, 400, `malformed AdmissionReview: ${reviewError.message}`)),
        );
      return;
    }
    const timeoutMs = timeoutOf(req, options.defaultTimeoutMs ?? 10_000);
    const outcome = await runWithDeadline(endpoint, request, timeoutMs, options);
    const response: AdmissionResponse = { uid: request.uid, ...outcome.response };
    res.status(200).json(admissionReviewFor(response));
    logOutcome(options, endpoint, request, outcome, now() - started);
  } finally {
    stopTimer();
    options.metrics.inFlight.dec();
  }
}

function timeoutOf(req: Request, fallbackMs: number): number {
  const raw = req.query.timeout;
  const parsed = typeof raw === 'string' ? parseGoDuration(raw) : undefined;
  return parsed !== undefined && parsed > 0 ? parsed : fallbackMs;
}

async function runWithDeadline(
  endpoint: Endpoint,
  request: AdmissionRequest,
  timeoutMs: number,
  options: AdmissionAppOptions,
): Promise<ReviewOutcome> {
  const now = options.now ?? Date.now;
  const budgetMs = budgetFor(timeoutMs);
  const controller = new AbortController();
  const deadline = now() + budgetMs;
  const abortTimer = setTimeout(
    () => controller.abort(new Error(`timed out after ${seconds(budgetMs)}`)),
    budgetMs,
  );
  let backstop: NodeJS.Timeout | undefined;
  // The handler is expected to answer when its signal aborts (it knows the policy modes). If it
  // does not, the server answers for it: fail closed.
  const late = new Promise<ReviewOutcome>((resolve) => {
    backstop = setTimeout(
      () => resolve(timedOut(budgetMs + (options.graceMs ?? 250))),
      budgetMs + (options.graceMs ?? 250),
    );
  });
  try {
    return await Promise.race([
      options
        .handler(endpoint, request, { signal: controller.signal, deadline, budgetMs })
        .catch((error: unknown) => handlerFailed(error, options.logger, request.uid)),
      late,
    ]);
  } finally {
    clearTimeout(abortTimer);
    clearTimeout(backstop);
    controller.abort(new Error('answered'));
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

function timedOut(ms: number): ReviewOutcome {
  const message = `verification timed out after ${seconds(ms)}`;
  return {
    response: { allowed: false, status: { code: 403, message, reason: 'Forbidden' } },
    decision: 'denied',
    rule: 'infrastructure',
    reason: message,
  };
}

function handlerFailed(error: unknown, logger: Logger, uid: string): ReviewOutcome {
  const message =
    error instanceof FieldError
      ? `cannot admit: ${error.message}`
      : `internal error while deciding: ${error instanceof Error ? error.message : String(error)}`;
  logger.error({ uid, err: error }, message);
  return {
    response: {
      allowed: false,
      status: { code: error instanceof FieldError ? 400 : 500, message, reason: 'InternalError' },
    },
    decision: 'denied',
    rule: error instanceof FieldError ? 'malformed' : 'internal-error',
    reason: message,
  };
}

function logOutcome(
  options: AdmissionAppOptions,
  endpoint: Endpoint,
  request: AdmissionRequest,
  outcome: ReviewOutcome,
  durationMs: number,
): void {
  const kind = request.kind.kind;
  options.metrics.admissions.inc({ endpoint, decision: outcome.decision, rule: outcome.rule, kind });
  const line = {
    endpoint,
    uid: request.uid,
    kind,
    subResource: request.subResource,
    namespace: request.namespace,
    name: request.name ?? request.object?.metadata?.name ?? request.object?.metadata?.generateName,
    operation: request.operation,
    user: request.userInfo.username,
    dryRun: request.dryRun,
    decision: outcome.decision,
    rule: outcome.rule,
    reason: outcome.reason,
    durationMs: Math.round(durationMs * 1000) / 1000,
  };
  if (outcome.decision === 'denied') options.logger.warn(line, 'admission');
  else options.logger.info(line, 'admission');
}
