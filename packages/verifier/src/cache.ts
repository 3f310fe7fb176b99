// A bounded cache of verification passes, with de-duplication of identical work in flight.
//
// Only passes are kept: a policy failure may be fixed by signing the image a minute later, and an
// infrastructure failure (timeout, registry down) must be retried, never remembered. Entries expire
// after `ttlMs` and the least recently used go first beyond `maxEntries`, so memory stays bounded
// whatever the cluster admits.

export interface VerificationCacheOptions {
  /** How long a pass is reused (default 5 minutes). */
  readonly ttlMs?: number;
  /** Most entries kept (default 10,000; an entry is a few hundred bytes). */
  readonly maxEntries?: number;
  /**
   * How much earlier than a caller's own deadline the deadline of work in flight may be for the
   * caller to join it (default 2 s). Reviews of one rollout arrive with deadlines a few
   * milliseconds apart and share; a review whose deadline is much later than that of the work in
   * flight (a client that asked for `?timeout=100ms` started it) starts its own.
   */
  readonly joinSlackMs?: number;
  readonly now?: () => number;
}

export type CacheResult = 'hit' | 'miss' | 'shared';

/** Who waits for a result: a way to give up and the time by which it must have it. */
export interface CacheWaiter {
  readonly signal: AbortSignal;
  /** Absolute time (on the cache's clock) after which this waiter no longer waits. */
  readonly deadline: number;
}

/** What a waiter is rejected with when its own deadline passes before the shared work is done. */
export class WaitDeadlineError extends Error {
  override readonly name = 'WaitDeadlineError';
}

interface Entry<T> {
  readonly value: T;
  readonly expires: number;
}

interface Flight<T> {
  readonly promise: Promise<T>;
  readonly controller: AbortController;
  /** The deadline the work runs under: that of the waiter that started it. */
  readonly deadline: number;
  waiters: number;
}

export class VerificationCache<T> {
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #joinSlackMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry<T>>();
  readonly #flights = new Map<string, Flight<T>>();

  constructor(options: VerificationCacheOptions = {}) {
    this.#ttlMs = options.ttlMs ?? 300_000;
    this.#max = options.maxEntries ?? 10_000;
    this.#joinSlackMs = options.joinSlackMs ?? 2_000;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * The cached pass for `key`, or the result of `compute`. Concurrent calls for one key share one
   * computation, which runs under the deadline of the caller that started it; a caller whose own
   * deadline is more than `joinSlackMs` later starts a new computation instead of joining one that
   * would give up too early (later callers join the newest). Each caller waits until its own signal fires or deadline
   * passes; the work is aborted only when every caller that waits for it has given up. `keep` says
   * whether a result may be cached (passes only): `true` for the cache's lifetime, a number of
   * milliseconds for at most that long (a pass someone else verified a while ago), `false` or a
   * number not above 0 not at all.
   */
  async get(
    key: string,
    waiter: CacheWaiter,
    compute: (call: CacheWaiter) => Promise<T>,
    keep: (value: T) => boolean | number,
    onResult?: (result: CacheResult) => void,
  ): Promise<T> {
    const entry = this.#entries.get(key);
    if (entry !== undefined) {
      if (entry.expires > this.#now()) {
        // Refresh recency: Map iteration order is insertion order.
        this.#entries.delete(key);
        this.#entries.set(key, entry);
        onResult?.('hit');
        return entry.value;
      }
      this.#entries.delete(key);
    }
    let flight = this.#flights.get(key);
    if (flight !== undefined && flight.deadline < waiter.deadline - this.#joinSlackMs) flight = undefined;
    onResult?.(flight === undefined ? 'miss' : 'shared');
    if (flight === undefined) {
      const controller = new AbortController();
      const deadline = waiter.deadline;
      const promise = compute({ signal: controller.signal, deadline }).then((value) => {
        const lifetime = keep(value);
        const ms = lifetime === true ? this.#ttlMs : lifetime === false ? 0 : Math.min(lifetime, this.#ttlMs);
        if (ms > 0) this.#store(key, value, ms);
        return value;
      });
      const created: Flight<T> = { promise, controller, deadline, waiters: 0 };
      flight = created;
      this.#flights.set(key, created);
      const forget = () => {
        if (this.#flights.get(key) === created) this.#flights.delete(key);
      };
      promise.then(forget, forget);
    }
    return this.#wait(key, flight, waiter);
  }

  #wait(key: string, flight: Flight<T>, waiter: CacheWaiter): Promise<T> {
    const { signal } = waiter;
    flight.waiters++;
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let left = false;
      const leave = () => {
        if (left) return false;
        left = true;
        signal.removeEventListener('abort', onAbort);
        clearTimeout(timer);
        flight.waiters--;
        return true;
      };
      const giveUp = (reason: Error) => {
        leave();
        if (flight.waiters === 0) {
          // Nobody waits any more: stop the work, and let the next caller start afresh.
          if (this.#flights.get(key) === flight) this.#flights.delete(key);
          flight.controller.abort(reason);
        }
        reject(reason);
      };
      const onAbort = () => giveUp(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      // Shared work may run longer than this waiter may wait: it leaves at its own deadline.
      if (waiter.deadline < flight.deadline) {
        const ms = Math.max(0, waiter.deadline - this.#now());
        timer = setTimeout(() => giveUp(new WaitDeadlineError('the deadline passed')), ms);
      }
      flight.promise.then(
        (value) => {
          if (leave()) resolve(value);
        },
        (error: unknown) => {
          if (leave()) reject(error);
        },
      );
    });
  }

  #store(key: string, value: T, ms: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, expires: this.#now() + ms });
    while (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  clear(): void {
    this.#entries.clear();
  }
}
