import express, { type Express } from 'express';
import type { SignetMetrics } from '../metrics.js';

export interface Readiness {
  /** Ready once the first policy sync finished; the reason says what is missing otherwise. */
  readonly ready: () => { ready: boolean; reason?: string };
}

/** Plain-HTTP operations endpoints on their own port: `/healthz`, `/readyz`, `/metrics`. */
export function createOpsApp(metrics: SignetMetrics, readiness: Readiness): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    res.type('text/plain').send('ok');
  });
  app.get('/readyz', (_req, res) => {
    const state = readiness.ready();
    res
      .status(state.ready ? 200 : 503)
      .type('text/plain')
      .send(state.ready ? 'ready' : `not ready: ${state.reason ?? 'starting'}`);
  });
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  return app;
}
