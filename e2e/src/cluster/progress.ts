/** One line of start-up progress: which component, how long since the start, what happened. */
export interface ClusterProgress {
  readonly component: string;
  /** Seconds since `startLocalCluster` was called, one decimal. */
  readonly elapsedSeconds: number;
  readonly message: string;
  /** `[12.3s] kube-apiserver: ready`, for a person watching a test run. */
  readonly line: string;
}

export type ProgressListener = (event: ClusterProgress) => void;

/** Stamps progress events with the time since one start, and keeps long waits from being silent. */
export class ProgressReporter {
  readonly #listener: ProgressListener | undefined;
  readonly #started: number;
  readonly #heartbeatMs: number;

  constructor(listener: ProgressListener | undefined, options: { heartbeatMs?: number; now?: number } = {}) {
    this.#listener = listener;
    this.#started = options.now ?? Date.now();
    this.#heartbeatMs = options.heartbeatMs ?? 5_000;
  }

  get elapsedSeconds(): number {
    return Math.round((Date.now() - this.#started) / 100) / 10;
  }

  report(component: string, message: string): void {
    const elapsedSeconds = this.elapsedSeconds;
    const line = `[${elapsedSeconds.toFixed(1)}s] ${component}: ${message}`;
    this.#listener?.({ component, elapsedSeconds, message, line });
  }

  /**
   * Reports `waiting for <what>` now and every few seconds until `work` settles, then `<done>` with
   * the time it took.
   */
  async during<T>(component: string, what: string, work: Promise<T>, done = 'ready'): Promise<T> {
    const since = Date.now();
    const seconds = () => ((Date.now() - since) / 1000).toFixed(1);
    this.report(component, `waiting for ${what}`);
    const timer = setInterval(
      () => this.report(component, `still waiting for ${what} (${seconds()}s)`),
      this.#heartbeatMs,
    );
    try {
      const result = await work;
      this.report(component, `${done} after ${seconds()}s`);
      return result;
    } finally {
      clearInterval(timer);
    }
  }
}
