// Heavy synchronous work (parsing a multi-megabyte AdmissionReview) one task per event-loop turn,
// so that the cheap reviews that arrive meanwhile (a scale-down must never wait) are read and
// answered between them. The queue is bounded: beyond it, work is refused.

export class SerialQueue {
  readonly #waiting: (() => void)[] = [];
  #running = false;

  constructor(readonly maxWaiting: number) {}

  get waiting(): number {
    return this.#waiting.length;
  }

  /** Runs `task` after the ones queued before it; `undefined` when the queue is full. */
  run<T>(task: () => T): Promise<T> | undefined {
    if (this.#waiting.length >= this.maxWaiting) return undefined;
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push(() => {
        try {
          resolve(task());
        } catch (error) {
          reject(error);
        }
      });
      if (!this.#running) this.#next();
    });
  }

  #next(): void {
    this.#running = true;
    // A fresh event-loop turn per task: I/O (other requests) is handled between two tasks.
    setImmediate(() => {
      this.#waiting.shift()?.();
      if (this.#waiting.length > 0) this.#next();
      else this.#running = false;
    });
  }
}
