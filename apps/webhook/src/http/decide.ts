// The handler at the end of the chain: the quick handler answers synchronously what needs no
// verification (ADR 0012: a scale-down costs no timers, AbortController or promises); the rest is
// decided under the API server's deadline. Either way the answer carries the request's uid.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AdmissionRequest, admissionReviewFor } from '@signet/k8s-types';
import { logOutcome } from './admission-log.js';
import { runWithDeadline } from './deadline.js';
import { parseGoDuration } from './duration.js';
import { type Exchange, exchangeOf, type Middleware } from './exchange.js';
import { send } from './respond.js';
import type { ReviewOutcome } from './review.js';

export const decide: Middleware = (req, res) => {
  const exchange = exchangeOf(res);
  const request = exchange.request as AdmissionRequest;
  const quick = quickOutcome(exchange, request);
  if (quick !== undefined) {
    answer(res, exchange, request, quick);
    return;
  }
  return runWithDeadline(exchange.endpoint, request, timeoutOf(req, exchange), exchange.settings).then(
    (outcome) => answer(res, exchange, request, outcome),
  );
};

function answer(
  res: ServerResponse,
  exchange: Exchange,
  request: AdmissionRequest,
  outcome: ReviewOutcome,
): void {
  send(res, exchange.settings, 200, admissionReviewFor({ uid: request.uid, ...outcome.response }));
  logOutcome(exchange, request, outcome);
  exchange.finish();
}

/** The quick handler's answer; when it has none, or throws, the full handler answers (and reports a failure). */
function quickOutcome(exchange: Exchange, request: AdmissionRequest): ReviewOutcome | undefined {
  const quick = exchange.settings.quickHandler;
  if (quick === undefined || exchange.endpoint === 'validate-policy') return undefined;
  try {
    return quick(exchange.endpoint, request);
  } catch {
    return undefined;
  }
}

const TIMEOUT_PARAMETER = /[?&]timeout=([^&#]*)/;

/** The API server's `?timeout=` (a Go duration), else the default. */
function timeoutOf(req: IncomingMessage, exchange: Exchange): number {
  const raw = TIMEOUT_PARAMETER.exec(req.url ?? '')?.[1];
  const parsed = raw === undefined ? undefined : parseGoDuration(decoded(raw));
  return parsed !== undefined && parsed > 0 ? parsed : exchange.settings.defaultTimeoutMs;
}

/** A query parameter's value, undecodable ones as they are (then not a duration). */
function decoded(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
