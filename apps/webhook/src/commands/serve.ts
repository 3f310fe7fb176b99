import { startSignet } from '../signet.js';
import type { ServeConfig } from './serve-config.js';

/** Runs the webhook until SIGTERM or SIGINT, then finishes in-flight reviews and exits 0. */
export async function runServe(config: ServeConfig): Promise<number> {
  const signet = await startSignet(config);
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      signet.logger.info({ signal }, 'shutting down: finishing in-flight reviews');
      resolve();
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await signet.stop(10_000);
  signet.logger.info('stopped');
  return 0;
}
