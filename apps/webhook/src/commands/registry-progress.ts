// What `signet verify` says while a registry is slow: every few seconds, on stderr, which request
// it is waiting for and for how long, instead of silence until the timeout. Pending requests are
// looked at ten times per interval, so that a request slower than the interval is said whenever it
// started (a check once per interval could fall just before each request turns slow).
import type { FetchFunction } from '@signet/registry';
import { dispatchFetch } from '@signet/registry';

interface Pending {
  readonly what: string;
  readonly started: number;
}

export class RegistryProgress {
  readonly #write: (line: string) => void;
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #pending = new Set<Pending>();
  #timer: NodeJS.Timeout | undefined;
  #lastReport = Number.NEGATIVE_INFINITY;

  constructor(write: (line: string) => void, options: { intervalMs?: number; now?: () => number } = {}) {
    this.#write = write;
    this.#intervalMs = options.intervalMs ?? 3_000;
    this.#now = options.now ?? Date.now;
  }

  /** `next` (the registry client's request function), with each request tracked until it answers. */
  wrap(next: FetchFunction = dispatchFetch): FetchFunction {
    return async (url, init) => {
      const pending = { what: `${init.method} ${url.host}${url.pathname}`, started: this.#now() };
      this.#pending.add(pending);
      this.#timer ??= setInterval(() => this.#report(), Math.max(10, this.#intervalMs / 10)).unref();
      try {
        return await next(url, init);
      } finally {
        this.#pending.delete(pending);
      }
    };
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #report(): void {
    const now = this.#now();
    if (now - this.#lastReport < this.#intervalMs) return;
    const slow = [...this.#pending].filter((p) => now - p.started >= this.#intervalMs);
    const [oldest] = slow;
    if (oldest === undefined) return;
    const others = slow.length > 1 ? ` (and ${slow.length - 1} more)` : '';
    const seconds = Math.round((now - oldest.started) / 1000);
    this.#lastReport = now;
    this.#write(`waiting for the registry: ${oldest.what}${others}, ${seconds}s so far`);
  }
}
