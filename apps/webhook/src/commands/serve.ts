import type { ServeConfig } from '../config.js';
import { startSignet } from '../signet.js';

/**
 * Runs the webhook until SIGTERM or SIGINT, then shuts down gracefully (not ready, answering for
 * the drain period, finishing in-flight reviews) and exits 0. A second signal exits at once.
 */
export async function runServe(config: ServeConfig): Promise<number> {
  const signet = await startSignet(config);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  signet.logger.info({ signal }, 'received a signal');
  const again = () => {
    signet.logger.warn('second signal: stopping now');
    void signet.stop(0).then(() => process.exit(1));
  };
  process.once('SIGTERM', again);
  process.once('SIGINT', again);
  await signet.shutdown();
  signet.logger.info('stopped');
  return 0;
}
