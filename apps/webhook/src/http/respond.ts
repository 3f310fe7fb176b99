// Writing answers. Every answer of an admission endpoint is an AdmissionReview (errors included)
// carrying the request uid, empty when it could not be read. Written with Node's own
// `writeHead`/`end`: express's `res.json` would add an ETag hash and a freshness check per review.

import type { ServerResponse } from 'node:http';
import { type AdmissionResponse, admissionReviewFor } from '@signet/k8s-types';
import type { AppSettings, Exchange } from './exchange.js';

/** Writes `body` as JSON, unless the connection is gone; `close` (or a draining app) ends the connection after it. */
export function send(
  res: ServerResponse,
  settings: Pick<AppSettings, 'draining'>,
  status: number,
  body: unknown,
  close = false,
): void {
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

/** A refusal as an AdmissionResponse: never allowed, with the HTTP status and its reason. */
export function failure(uid: string, code: number, message: string): AdmissionResponse {
  const reason =
    code === 400
      ? 'BadRequest'
      : code === 408
        ? 'Timeout'
        : code === 413
          ? 'RequestEntityTooLarge'
          : code === 503
            ? 'ServiceUnavailable'
            : code === 500
              ? 'InternalError'
              : 'Forbidden';
  return { uid, allowed: false, status: { code, message, reason } };
}

/**
 * A review refused before it was decided (a body too large, too slow, over budget, too costly to
 * parse; an internal error): logged, counted as `http-<status>`, answered. `close` when the body
 * may still be arriving: what is left of it is not read.
 */
export function refuse(
  res: ServerResponse,
  exchange: Exchange,
  status: number,
  error: unknown,
  options: { readonly uid?: string; readonly close?: boolean } = {},
): void {
  const { logger, metrics } = exchange.settings;
  const message = error instanceof Error ? error.message : String(error);
  logger.warn({ endpoint: exchange.endpoint, status, err: error }, 'refused an admission request');
  metrics.admissions.inc({
    endpoint: exchange.endpoint,
    decision: 'error',
    rule: `http-${status}`,
    kind: 'unknown',
  });
  send(
    res,
    exchange.settings,
    status,
    admissionReviewFor(failure(options.uid ?? '', status, message)),
    options.close,
  );
  exchange.finish();
  if (options.close) res.once('finish', () => res.req.destroy());
}
