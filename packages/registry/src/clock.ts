// Time, passed in rather than read from globals, so tests can run retries and token expiry
// without waiting. Deadlines are absolute times on this clock.

export interface Clock {
  /** Milliseconds since the epoch. Must advance at real speed in production. */
  now(): number;
  /** Resolves after `ms` milliseconds; rejects with `signal.reason` when `signal` fires first. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** The wall clock and real timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    }),
};
