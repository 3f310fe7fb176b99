// A bound on concurrent verification work (registry calls, signature checks). Cheap decisions never
// pass through it; verifications beyond the bound wait their turn, within their own deadline, and a
// bounded number may wait at all.

export class ConcurrencyLimit {
  readonly #waiting: { start: () => void; abandon: () => void }[] = [];
  #running = 0;

  constructor(
    readonly maxRunning: number,
    readonly maxWaiting: number,
  ) {}

  /**
   * Runs `work` when a slot is free. Rejects with an Error when too many are already waiting, or
   * when `signal` aborts before a slot frees up.
   */
  async run<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    if (this.#running >= this.maxRunning) await this.#wait(signal);
    else this.#running++;
    try {
      return await work();
    } finally {
      this.#release();
    }
  }

  #wait(signal: AbortSignal): Promise<void> {
    if (this.#waiting.length >= this.maxWaiting)
      return Promise.reject(
        new Error(
          `Signet is verifying ${this.#running} images and has ${this.#waiting.length} waiting; retry`,
        ),
      );
    return new Promise((resolve, reject) => {
      const entry = {
        start: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        abandon: () =>
          reject(new Error('timed out waiting for a verification slot', { cause: signal.reason })),
      };
      const onAbort = () => {
        const index = this.#waiting.indexOf(entry);
        if (index >= 0) this.#waiting.splice(index, 1);
        entry.abandon();
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(entry);
    });
  }

  #release(): void {
    const next = this.#waiting.shift();
    // The slot passes to the next waiter as it is; only without one is it freed.
    if (next) next.start();
    else this.#running--;
  }
}
