import type { RequestListener, ServerResponse } from 'node:http';
import type { SignetMetrics } from '../metrics.js';

export interface Readiness {
  /** Ready once the first policy sync finished, until shutdown; the reason says what is missing otherwise. */
  readonly ready: () => { ready: boolean; reason?: string };
}

function text(res: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Plain-HTTP operations endpoints on their own port: `/healthz`, `/readyz`, `/metrics`. */
export function createOpsApp(metrics: SignetMetrics, readiness: Readiness): RequestListener {
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return text(res, 405, 'method not allowed');
    if (path === '/healthz') return text(res, 200, 'ok');
    if (path === '/readyz') {
      const state = readiness.ready();
      return text(
        res,
        state.ready ? 200 : 503,
        state.ready ? 'ready' : `not ready: ${state.reason ?? 'starting'}`,
      );
    }
    if (path === '/metrics') {
      metrics.registry.metrics().then(
        (body) => text(res, 200, body, metrics.registry.contentType),
        (error: unknown) => text(res, 500, `cannot collect metrics: ${String(error)}`),
      );
      return;
    }
    text(res, 404, 'not found');
  };
}
