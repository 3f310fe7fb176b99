// What the first verification would otherwise pay on its way, paid once Signet is ready and before
// the API server sends it reviews: the registry client's HTTP path (undici's agent and `request`
// API, its HTTP parser, a dispatcher made as the registry client makes its own), by one plain-HTTP
// request to Signet's own `/healthz`. Nothing leaves the host, no registry or API server is
// contacted, and the request is not an admission review (no log line, no review counted).
import { createDispatcher, dispatchFetch } from '@signet/registry';
import type { Part } from './lifecycle/part.js';
import type { Logger } from './logger.js';

export interface WarmUpOptions {
  /** True once policies are loaded (`/readyz`). */
  readonly ready: () => boolean;
  /** The operations port's `/healthz`, once it listens. */
  readonly healthz: () => URL;
  readonly logger: Logger;
  /**
   * How long after ready: a new replica gets its first review only once its Pod is Ready and the
   * Service's endpoints list it (a readiness probe and an EndpointSlice update later), and the
   * warm-up must not compete with reviews sent at once. Default 1 s.
   */
  readonly delayMs?: number;
}

const POLL_MS = 50;
const TIMEOUT_MS = 5000;

export class WarmUp implements Part {
  readonly name = 'warm-up once ready';
  readonly #options: WarmUpOptions;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: WarmUpOptions) {
    this.#options = options;
  }

  /** Returns at once: the warm-up runs in the background. */
  start(): void {
    this.#waitForReady();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #waitForReady(): void {
    if (this.#stopped) return;
    const ready = this.#options.ready();
    this.#timer = setTimeout(
      () => (ready ? void this.#run() : this.#waitForReady()),
      ready ? (this.#options.delayMs ?? 1000) : POLL_MS,
    );
    this.#timer.unref();
  }

  async #run(): Promise<void> {
    if (this.#stopped) return;
    const { logger } = this.#options;
    const started = performance.now();
    try {
      const dispatcher = await createDispatcher();
      try {
        const answer = await dispatchFetch(this.#options.healthz(), {
          method: 'GET',
          dispatcher,
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
        await answer.body?.cancel();
      } finally {
        await dispatcher.close();
      }
      logger.debug({ ms: Math.round(performance.now() - started) }, 'warmed up the registry client');
    } catch (error) {
      // Only a first verification's speed depends on it.
      logger.debug({ err: error }, 'warm-up did not complete');
    }
  }
}

/** `/healthz` on the operations port, reached over loopback when it listens on every address. */
export function healthzUrl(opsHost: string | undefined, opsPort: number): URL {
  const any = opsHost === undefined || opsHost === '' || opsHost === '0.0.0.0' || opsHost === '::';
  const host = any ? '127.0.0.1' : opsHost.includes(':') ? `[${opsHost}]` : opsHost;
  return new URL(`http://${host}:${opsPort}/healthz`);
}
