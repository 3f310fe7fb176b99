// The deadline of a review that verifies: the API server's `?timeout=` less a margin, an
// AbortSignal for the handler, and a backstop that answers for a handler that does not stop.
import { type AdmissionRequest, FieldError } from '@signet/k8s-types';
import type { Logger } from '../logger.js';
import type { AppSettings } from './exchange.js';
import { budgetFor, type Endpoint, type ReviewOutcome, ReviewTimeout } from './review.js';

export async function runWithDeadline(
  endpoint: Endpoint,
  request: AdmissionRequest,
  timeoutMs: number,
  settings: AppSettings,
): Promise<ReviewOutcome> {
  const budgetMs = budgetFor(timeoutMs);
  const controller = new AbortController();
  const deadline = settings.now() + budgetMs;
  const abortTimer = setTimeout(
    () => controller.abort(new ReviewTimeout(`timed out after ${seconds(budgetMs)}`)),
    budgetMs,
  );
  let backstop: NodeJS.Timeout | undefined;
  const graceMs = settings.graceMs;
  // The handler is expected to answer when its signal aborts (it knows the policy modes). If it
  // does not, the server answers for it: fail closed.
  const late = new Promise<ReviewOutcome>((resolve) => {
    backstop = setTimeout(() => resolve(timedOut(budgetMs + graceMs)), budgetMs + graceMs);
  });
  const handler =
    endpoint === 'validate-policy' ? (settings.policyHandler ?? settings.handler) : settings.handler;
  try {
    return await Promise.race([
      handler(endpoint, request, { signal: controller.signal, deadline, budgetMs }).catch((error: unknown) =>
        handlerFailed(error, settings.logger, request.uid),
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
