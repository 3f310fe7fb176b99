// The admission endpoints on Node's own HTTP server: `POST /validate`, `POST /mutate` and
// `POST /validate-policy` (Signet's own policy objects) taking `admission.k8s.io/v1` AdmissionReviews. Every answer is an AdmissionReview carrying the request
// uid (empty when it could not be read), errors included. Bodies are bounded in size, in total
// bytes being read and in time; heavy ones are parsed one per event-loop turn, so the cheap
// decisions of a flood's neighbours stay fast.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { ImageVerdict } from '@signet/core';
import {
  type AdmissionAnswer,
  type AdmissionRequest,
  type AdmissionResponse,
  AdmissionReviewError,
  admissionReviewFor,
  FieldError,
  POLICY_GROUP,
  parseAdmissionReviewJson,
  workloadForResource,
} from '@signet/k8s-types';
import type { ImageVerification } from '@signet/verifier';
import type { Logger } from '../logger.js';
import type { SignetMetrics } from '../metrics.js';
import { BodyError, ByteBudget, type HeldBody, readBody } from './body.js';
import { parseGoDuration } from './duration.js';
import { SerialQueue } from './serial-queue.js';

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
  readonly verifications?: readonly ImageVerification[];
  /** Per image, core's verdict, settled ones (no policy matched, tag not pinned) included (for audits). */
  readonly verdicts?: readonly ImageVerdict[];
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
  /** Bodies larger than this are parsed one per event-loop turn (default 256 KiB). */
  readonly heavyBodyBytes?: number;
  /** Heavy bodies waiting to be parsed (default 32); beyond, 503. */
  readonly maxQueuedHeavy?: number;
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
const MAX_TIMEOUT_MS = 30_000;
const MAX_LOGGED_FIELD = 256;

/** The time the handler may use: the API server's timeout less a margin to send the answer. */
export function budgetFor(timeoutMs: number): number {
  const margin = Math.min(1000, Math.max(100, timeoutMs * 0.1));
  return Math.max(50, Math.min(timeoutMs, MAX_TIMEOUT_MS) - margin);
}

/** The admission request listener, and the switch that makes it ask clients to reconnect. */
export interface AdmissionApp {
  readonly listener: RequestListener;
  /** From now on every answer closes its connection, so clients reconnect through the Service. */
  drain(): void;
}

interface Settings {
  readonly options: AdmissionAppOptions;
  readonly limits: { readonly maxBytes: number; readonly timeoutMs: number };
  readonly budget: ByteBudget;
  readonly heavy: SerialQueue;
  readonly heavyBytes: number;
  readonly now: () => number;
  draining: boolean;
}

export function createAdmissionApp(options: AdmissionAppOptions): AdmissionApp {
  const settings: Settings = {
    options,
    limits: {
      maxBytes: options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT,
      timeoutMs: options.bodyTimeoutMs ?? 5000,
    },
    budget: new ByteBudget(options.inFlightBodyBytes ?? 32 * 1024 * 1024),
    heavy: new SerialQueue(options.maxQueuedHeavy ?? 32),
    heavyBytes: options.heavyBodyBytes ?? 256 * 1024,
    now: options.now ?? Date.now,
    draining: false,
  };
  return {
    listener: (req, res) => {
      const endpoint = endpointOf(req);
      if (endpoint === undefined || (endpoint === 'validate-policy' && !options.policyHandler)) {
        send(res, settings, 404, {
          error: `no such endpoint: ${req.method} ${(req.url ?? '').split('?')[0]}`,
        });
        return;
      }
      void answer(endpoint, req, res, settings);
    },
    drain: () => {
      settings.draining = true;
    },
  };
}

const ENDPOINTS: ReadonlyMap<string, Endpoint> = new Map([
  ['/validate', 'validate'],
  ['/mutate', 'mutate'],
  ['/validate-policy', 'validate-policy'],
]);

function endpointOf(req: IncomingMessage): Endpoint | undefined {
  if (req.method !== 'POST') return undefined;
  return ENDPOINTS.get((req.url ?? '').split('?')[0] ?? '');
}

function send(res: ServerResponse, settings: Settings, status: number, body: unknown, close = false): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  };
  if (close || settings.draining) headers.connection = 'close';
  res.writeHead(status, headers);
  res.end(text);
}

function failure(uid: string, code: number, message: string): AdmissionResponse {
  const reason =
    code === 400
      ? 'BadRequest'
      : code === 413
        ? 'RequestEntityTooLarge'
        : code === 503
          ? 'ServiceUnavailable'
          : 'Forbidden';
  return { uid, allowed: false, status: { code, message, reason } };
}

async function answer(endpoint: Endpoint, req: IncomingMessage, res: ServerResponse, settings: Settings) {
  const { metrics, logger } = settings.options;
  const started = settings.now();
  const stopTimer = metrics.admissionDuration.startTimer({ endpoint });
  metrics.inFlight.inc();
  try {
    let body: HeldBody;
    try {
      body = await readBody(req, settings.limits, settings.budget);
    } catch (error) {
      refuseBody(endpoint, res, settings, error);
      return;
    }
    const parse = () => parseAdmissionReviewJson(body.bytes).request;
    const parsed =
      body.bytes.length > settings.heavyBytes ? settings.heavy.run(parse) : Promise.resolve().then(parse);
    if (parsed === undefined) {
      body.release();
      refuseBody(endpoint, res, settings, new BodyError(503, 'too many large reviews are waiting; retry'));
      return;
    }
    let request: AdmissionRequest;
    try {
      request = await parsed;
    } catch (error) {
      const uid = error instanceof AdmissionReviewError ? (error.uid ?? '') : '';
      const message = `malformed AdmissionReview: ${(error as Error).message}`;
      logger.warn({ endpoint, uid, err: error }, message);
      metrics.admissions.inc({ endpoint, decision: 'error', rule: 'malformed', kind: 'unknown' });
      send(res, settings, 400, admissionReviewFor(failure(uid, 400, message)));
      return;
    } finally {
      body.release();
    }
    const outcome =
      quickOutcome(endpoint, request, settings) ??
      (await runWithDeadline(endpoint, request, timeoutOf(req, settings), settings));
    send(res, settings, 200, admissionReviewFor({ uid: request.uid, ...outcome.response }));
    logOutcome(settings, endpoint, request, outcome, settings.now() - started);
  } finally {
    stopTimer();
    metrics.inFlight.dec();
  }
}

/** A body that was not read (too large, too slow, over budget): answered, and the connection closed. */
function refuseBody(endpoint: Endpoint, res: ServerResponse, settings: Settings, error: unknown): void {
  const status = error instanceof BodyError ? error.status : 400;
  const message = error instanceof Error ? error.message : String(error);
  settings.options.logger.warn({ endpoint, status, err: error }, 'refused an admission request body');
  settings.options.metrics.admissions.inc({
    endpoint,
    decision: 'error',
    rule: `http-${status}`,
    kind: 'unknown',
  });
  send(res, settings, status, admissionReviewFor(failure('', status, message)), true);
  // Whatever of the body is still coming is not read.
  res.once('finish', () => res.req.destroy());
}

/** The quick handler's answer; when it has none, or throws, the full handler answers (and reports a failure). */
function quickOutcome(
  endpoint: Endpoint,
  request: AdmissionRequest,
  settings: Settings,
): ReviewOutcome | undefined {
  const quick = settings.options.quickHandler;
  if (quick === undefined || endpoint === 'validate-policy') return undefined;
  try {
    return quick(endpoint, request);
  } catch {
    return undefined;
  }
}

function timeoutOf(req: IncomingMessage, settings: Settings): number {
  const query = (req.url ?? '').split('?')[1] ?? '';
  const raw = new URLSearchParams(query).get('timeout');
  const parsed = raw === null ? undefined : parseGoDuration(raw);
  return parsed !== undefined && parsed > 0 ? parsed : (settings.options.defaultTimeoutMs ?? 10_000);
}

async function runWithDeadline(
  endpoint: Endpoint,
  request: AdmissionRequest,
  timeoutMs: number,
  settings: Settings,
): Promise<ReviewOutcome> {
  const { options } = settings;
  const budgetMs = budgetFor(timeoutMs);
  const controller = new AbortController();
  const deadline = settings.now() + budgetMs;
  const abortTimer = setTimeout(
    () => controller.abort(new ReviewTimeout(`timed out after ${seconds(budgetMs)}`)),
    budgetMs,
  );
  let backstop: NodeJS.Timeout | undefined;
  const graceMs = options.graceMs ?? 250;
  // The handler is expected to answer when its signal aborts (it knows the policy modes). If it
  // does not, the server answers for it: fail closed.
  const late = new Promise<ReviewOutcome>((resolve) => {
    backstop = setTimeout(() => resolve(timedOut(budgetMs + graceMs)), budgetMs + graceMs);
  });
  const handler =
    endpoint === 'validate-policy' ? (options.policyHandler ?? options.handler) : options.handler;
  try {
    return await Promise.race([
      handler(endpoint, request, { signal: controller.signal, deadline, budgetMs }).catch((error: unknown) =>
        handlerFailed(error, options.logger, request.uid),
      ),
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

/**
 * The `kind` metrics label: a kind of the workload catalogue (by the resource the request was
 * routed to), else `other`. Never the request's own text, which any client can make unbounded.
 */
export function kindLabel(request: AdmissionRequest): string {
  const { group, resource } = request.resource;
  if (group === POLICY_GROUP) return POLICY_KINDS.get(resource) ?? 'other';
  return workloadForResource(group, resource)?.kind ?? 'other';
}

const POLICY_KINDS: ReadonlyMap<string, string> = new Map([
  ['clusterimagepolicies', 'ClusterImagePolicy'],
  ['trustroots', 'TrustRoot'],
]);

/** Request fields are the client's: logged, but never at unbounded length. */
function clip(value: string | undefined): string | undefined {
  if (value === undefined || value.length <= MAX_LOGGED_FIELD) return value;
  return `${value.slice(0, MAX_LOGGED_FIELD)}…(${value.length} characters)`;
}

function logOutcome(
  settings: Settings,
  endpoint: Endpoint,
  request: AdmissionRequest,
  outcome: ReviewOutcome,
  durationMs: number,
): void {
  const { metrics } = settings.options;
  // The per-review line skips redaction (its fields carry no secret, see createLoggers).
  const logger = settings.options.admissionLog ?? settings.options.logger;
  metrics.admissions.inc({
    endpoint,
    decision: outcome.decision,
    rule: outcome.rule,
    kind: kindLabel(request),
  });
  if (endpoint === 'validate') {
    metrics.namespaceAdmissions.inc({
      namespace: metrics.namespaceLabel.value(request.namespace),
      decision: outcome.decision,
    });
  }
  const name = request.name ?? request.object?.metadata?.name ?? request.object?.metadata?.generateName;
  const line = {
    endpoint,
    uid: clip(request.uid),
    kind: clip(request.kind.kind),
    subResource: clip(request.subResource),
    namespace: clip(request.namespace),
    name: clip(typeof name === 'string' ? name : undefined),
    operation: request.operation,
    user: clip(request.userInfo.username),
    dryRun: request.dryRun,
    decision: outcome.decision,
    rule: outcome.rule,
    reason: outcome.reason,
    ...(outcome.warnings && outcome.warnings.length > 0 ? { warnings: outcome.warnings.map(clip) } : {}),
    durationMs: Math.round(durationMs * 1000) / 1000,
  };
  if (outcome.decision === 'denied') logger.warn(line, 'admission');
  else logger.info(line, 'admission');
}
