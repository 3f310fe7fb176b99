// The operations endpoints on their own plain-HTTP port, routed by express: `/healthz`, `/readyz`
// and `/metrics` (GET or HEAD; any other method is 405, any other path 404).
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type RequestHandler, type Response } from 'express';
import type { SignetMetrics } from '../metrics.js';
import type { ExpressHandle } from './admission-app.js';

export interface Readiness {
  /** Ready once the first policy sync finished, until shutdown; the reason says what is missing otherwise. */
  readonly ready: () => { ready: boolean; reason?: string };
}

function text(res: Response, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const readOnly: RequestHandler = (req, res, next) => {
  if (req.method !== 'GET' && req.method !== 'HEAD') return text(res, 405, 'method not allowed');
  next();
};

export function createOpsApp(
  metrics: SignetMetrics,
  readiness: Readiness,
): (req: IncomingMessage, res: ServerResponse) => void {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.enable('strict routing');
  app.enable('case sensitive routing');
  app.use(readOnly);
  app.get('/healthz', (_req, res) => text(res, 200, 'ok'));
  app.get('/readyz', (_req, res) => {
    const state = readiness.ready();
    text(res, state.ready ? 200 : 503, state.ready ? 'ready' : `not ready: ${state.reason ?? 'starting'}`);
  });
  app.get('/metrics', (_req, res) =>
    metrics.registry.metrics().then(
      (body) => text(res, 200, body, metrics.registry.contentType),
      (error: unknown) => text(res, 500, `cannot collect metrics: ${String(error)}`),
    ),
  );
  app.use((_req, res) => text(res, 404, 'not found'));
  const handle = app as unknown as ExpressHandle;
  return (req, res) => handle(req, res, () => res.destroy());
}
