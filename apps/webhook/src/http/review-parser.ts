// The parse middleware: the body read by `readReviewBody` becomes the exchange's AdmissionRequest.
// A small body is parsed at once on the event loop (the cheap decisions' path). A large one is
// first checked in a worker thread (body-check.ts); only if it is valid and within the bound on
// JSON objects and arrays does the event loop parse it, one per turn (serial-queue.ts), so that no
// body's parse holds the reviews that arrive meanwhile.

import type { ServerResponse } from 'node:http';
import {
  type AdmissionRequest,
  AdmissionReviewError,
  admissionReviewFor,
  parseAdmissionReview,
  parseAdmissionReviewJson,
} from '@signet/k8s-types';
import { BodyError, type HeldBody } from './body.js';
import { type Exchange, exchangeOf, type Middleware } from './exchange.js';
import { failure, refuse, send } from './respond.js';

export const parseReviewBody: Middleware = (_req, res, next) => {
  const exchange = exchangeOf(res);
  const body = exchange.body as HeldBody;
  if (body.size <= exchange.settings.heavyBytes) {
    let request: AdmissionRequest;
    try {
      request = parseAdmissionReviewJson(body.bytes()).request;
    } catch (error) {
      malformed(res, exchange, error);
      return;
    }
    exchange.request = request;
    exchange.releaseBody();
    next();
    return;
  }
  parseHeavy(res, exchange, body).then((request) => {
    if (request === undefined) return;
    exchange.request = request;
    next();
  }, next);
};

/** A large body: checked in a worker, then parsed on the event loop in its turn. */
async function parseHeavy(res: ServerResponse, exchange: Exchange, body: HeldBody) {
  const { bodyCheck, heavyParse } = exchange.settings;
  const checked = bodyCheck.check(body.chunks, body.size);
  if (checked === undefined) return busy(res, exchange, 'too many large reviews are waiting; retry');
  const verdict = await checked;
  switch (verdict.verdict) {
    case 'too-large':
      return refuse(res, exchange, 413, new BodyError(413, verdict.message));
    case 'unavailable':
      return refuse(res, exchange, 503, new BodyError(503, `${verdict.message}; retry`));
    case 'malformed':
      return malformed(res, exchange, new AdmissionReviewError(verdict.path, verdict.problem, verdict.uid));
  }
  // The worker bounded its nesting: the objects are not walked again.
  const { bytes } = verdict;
  const parsed = heavyParse.run(
    () =>
      parseAdmissionReview(
        JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')),
        {
          nestingChecked: true,
        },
      ).request,
  );
  if (parsed === undefined) return busy(res, exchange, 'too many large reviews are waiting; retry');
  try {
    return await parsed;
  } catch (error) {
    return malformed(res, exchange, error);
  } finally {
    exchange.releaseBody();
  }
}

function busy(res: ServerResponse, exchange: Exchange, message: string): undefined {
  refuse(res, exchange, 503, new BodyError(503, message));
  return undefined;
}

/** 400, with the uid when it could be read. */
function malformed(res: ServerResponse, exchange: Exchange, error: unknown): undefined {
  const { logger, metrics } = exchange.settings;
  const endpoint = exchange.endpoint;
  const uid = error instanceof AdmissionReviewError ? (error.uid ?? '') : '';
  const message = `malformed AdmissionReview: ${(error as Error).message}`;
  logger.warn({ endpoint, uid, err: error }, message);
  metrics.admissions.inc({ endpoint, decision: 'error', rule: 'malformed', kind: 'unknown' });
  send(res, exchange.settings, 400, admissionReviewFor(failure(uid, 400, message)));
  exchange.finish();
  return undefined;
}
