import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from '../../src/admission/limit.js';

const never = new AbortController().signal;

describe('ConcurrencyLimit', () => {
  it('runs at most maxRunning at once and hands slots to waiters in order', async () => {
    const limit = new ConcurrencyLimit(2, 10);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const work = (n: number) => async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 10));
      running--;
      order.push(n);
      return n;
    };
    const results = await Promise.all([1, 2, 3, 4, 5].map((n) => limit.run(work(n), never)));
    expect(results).toEqual([1, 2, 3, 4, 5]);
    expect(most).toBe(2);
    expect(order.slice(2)).toEqual([3, 4, 5]);
  });

  it('refuses beyond maxWaiting and lets a waiter leave at its deadline', async () => {
    const limit = new ConcurrencyLimit(1, 1);
    let release: () => void = () => undefined;
    const blocker = limit.run(() => new Promise<void>((resolve) => (release = resolve)), never);
    const timeout = new AbortController();
    const waiting = limit.run(async () => 'ran', timeout.signal);
    await expect(limit.run(async () => 'ran', never)).rejects.toThrow(/has 1 waiting; retry/);
    timeout.abort(new Error('deadline'));
    await expect(waiting).rejects.toThrow('timed out waiting for a verification slot');
    release();
    await blocker;
    expect(await limit.run(async () => 'free again', never)).toBe('free again');
    const aborted = new AbortController();
    aborted.abort();
    const busy = limit.run(() => new Promise<void>((resolve) => setTimeout(resolve, 5)), never);
    await expect(limit.run(async () => 'x', aborted.signal)).rejects.toThrow('timed out waiting');
    await busy;
  });
});
