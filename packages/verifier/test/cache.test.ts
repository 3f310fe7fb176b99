import { describe, expect, it } from 'vitest';
import { type CacheResult, type CacheWaiter, VerificationCache, WaitDeadlineError } from '../src/cache.js';

const never: CacheWaiter = { signal: new AbortController().signal, deadline: Number.POSITIVE_INFINITY };
const waiter = (signal: AbortSignal, deadline = Number.POSITIVE_INFINITY): CacheWaiter => ({
  signal,
  deadline,
});
const keepAll = () => true;

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('VerificationCache', () => {
  it('computes once, then serves hits until the entry expires', async () => {
    let now = 1000;
    const cache = new VerificationCache<string>({ ttlMs: 100, now: () => now });
    const seen: CacheResult[] = [];
    let runs = 0;
    const compute = async () => `v${++runs}`;
    expect(await cache.get('k', never, compute, keepAll, (r) => seen.push(r))).toBe('v1');
    expect(await cache.get('k', never, compute, keepAll, (r) => seen.push(r))).toBe('v1');
    now += 101;
    expect(await cache.get('k', never, compute, keepAll, (r) => seen.push(r))).toBe('v2');
    expect(seen).toEqual(['miss', 'hit', 'miss']);
  });

  it('keeps only what `keep` accepts (passes), so failures are computed again', async () => {
    const cache = new VerificationCache<{ passed: boolean }>();
    let runs = 0;
    const compute = async () => ({ passed: ++runs > 1 });
    const keep = (v: { passed: boolean }) => v.passed;
    expect(await cache.get('k', never, compute, keep)).toEqual({ passed: false });
    expect(await cache.get('k', never, compute, keep)).toEqual({ passed: true });
    expect(await cache.get('k', never, compute, keep)).toEqual({ passed: true });
    expect(runs).toBe(2);
  });

  it('keeps a value `keep` gives a lifetime for at most that long, never beyond the TTL', async () => {
    let now = 0;
    const cache = new VerificationCache<string>({ ttlMs: 100, now: () => now });
    let runs = 0;
    const compute = async () => `v${++runs}`;
    expect(await cache.get('short', never, compute, () => 30)).toBe('v1');
    now = 29;
    expect(await cache.get('short', never, compute, () => 30)).toBe('v1');
    now = 31;
    expect(await cache.get('short', never, compute, () => 30)).toBe('v2');
    // A lifetime longer than the TTL is cut to it; 0 (or less) keeps nothing.
    now = 0;
    expect(await cache.get('long', never, compute, () => 10_000)).toBe('v3');
    now = 101;
    expect(await cache.get('long', never, compute, () => 0)).toBe('v4');
    expect(await cache.get('long', never, compute, () => -5)).toBe('v5');
    expect(cache.size).toBe(1);
  });

  it('shares one computation among concurrent callers', async () => {
    const cache = new VerificationCache<number>();
    const gate = deferred<number>();
    let runs = 0;
    const seen: CacheResult[] = [];
    const calls = Array.from({ length: 200 }, () =>
      cache.get(
        'k',
        never,
        () => {
          runs++;
          return gate.promise;
        },
        keepAll,
        (r) => seen.push(r),
      ),
    );
    gate.resolve(7);
    expect(await Promise.all(calls)).toEqual(Array(200).fill(7));
    expect(runs).toBe(1);
    expect(seen.filter((r) => r === 'shared')).toHaveLength(199);
  });

  it('never shares a rejected computation afterwards', async () => {
    const cache = new VerificationCache<number>();
    await expect(cache.get('k', never, () => Promise.reject(new Error('down')), keepAll)).rejects.toThrow(
      'down',
    );
    expect(await cache.get('k', never, async () => 1, keepAll)).toBe(1);
  });

  it('aborts shared work only when every waiter gave up, and starts afresh after that', async () => {
    const cache = new VerificationCache<string>();
    const first = new AbortController();
    const second = new AbortController();
    let workSignal: AbortSignal | undefined;
    const gate = deferred<string>();
    const compute = (call: CacheWaiter) => {
      workSignal = call.signal;
      return gate.promise;
    };
    const a = cache.get('k', waiter(first.signal), compute, keepAll);
    const b = cache.get('k', waiter(second.signal), compute, keepAll);
    first.abort(new Error('first gave up'));
    await expect(a).rejects.toThrow('first gave up');
    expect(workSignal?.aborted).toBe(false);
    second.abort(new Error('second gave up'));
    await expect(b).rejects.toThrow('second gave up');
    expect(workSignal?.aborted).toBe(true);
    gate.resolve('late');
    expect(await cache.get('k', never, async () => 'fresh', keepAll)).toBe('fresh');
  });

  it('rejects at once for an already aborted signal', async () => {
    const cache = new VerificationCache<string>();
    const aborted = new AbortController();
    aborted.abort('gone');
    await expect(cache.get('k', waiter(aborted.signal), async () => 'x', keepAll)).rejects.toThrow('aborted');
  });

  it('bounds its size, dropping the least recently used entry', async () => {
    const cache = new VerificationCache<string>({ maxEntries: 2 });
    const value = (v: string) => async () => v;
    await cache.get('a', never, value('a'), keepAll);
    await cache.get('b', never, value('b'), keepAll);
    await cache.get('a', never, value('x'), keepAll); // refreshes a
    await cache.get('c', never, value('c'), keepAll); // evicts b
    expect(cache.size).toBe(2);
    expect(await cache.get('a', never, value('new'), keepAll)).toBe('a');
    expect(await cache.get('b', never, value('new-b'), keepAll)).toBe('new-b');
    cache.clear();
    expect(cache.size).toBe(0);
  });

  it('starts new work for a caller whose deadline is later than that of the work in flight', async () => {
    const cache = new VerificationCache<string>({ now: () => 0 });
    const gates = [deferred<string>(), deferred<string>()];
    const deadlines: number[] = [];
    const compute = (call: CacheWaiter) => {
      deadlines.push(call.deadline);
      return (gates[deadlines.length - 1] as ReturnType<typeof deferred<string>>).promise;
    };
    const seen: CacheResult[] = [];
    const short = cache.get('k', waiter(never.signal, 100), compute, keepAll, (r) => seen.push(r));
    const long = cache.get('k', waiter(never.signal, 10_000), compute, keepAll, (r) => seen.push(r));
    // Within the 2 s slack of the newest work: joins it.
    const joiner = cache.get('k', waiter(never.signal, 11_500), compute, keepAll, (r) => seen.push(r));
    expect(deadlines).toEqual([100, 10_000]);
    expect(seen).toEqual(['miss', 'miss', 'shared']);
    (gates[0] as ReturnType<typeof deferred<string>>).reject(new Error('short work timed out'));
    await expect(short).rejects.toThrow('short work timed out');
    (gates[1] as ReturnType<typeof deferred<string>>).resolve('pass');
    expect(await long).toBe('pass');
    expect(await joiner).toBe('pass');
  });

  it('lets a caller with an earlier deadline leave at it while the shared work goes on', async () => {
    const start = Date.now();
    const cache = new VerificationCache<string>({ now: Date.now });
    const gate = deferred<string>();
    let workSignal: AbortSignal | undefined;
    const compute = (call: CacheWaiter) => {
      workSignal = call.signal;
      return gate.promise;
    };
    const long = cache.get('k', waiter(never.signal, start + 10_000), compute, keepAll);
    const short = cache.get('k', waiter(never.signal, start + 50), compute, keepAll);
    await expect(short).rejects.toBeInstanceOf(WaitDeadlineError);
    expect(workSignal?.aborted).toBe(false);
    gate.resolve('pass');
    expect(await long).toBe('pass');
  });

  it('aborts the work when the only caller leaves at its deadline', async () => {
    const start = Date.now();
    const cache = new VerificationCache<string>({ now: Date.now });
    let workSignal: AbortSignal | undefined;
    const first = cache.get(
      'k',
      waiter(never.signal, start + 10_000),
      (call) => {
        workSignal = call.signal;
        return new Promise<string>(() => undefined);
      },
      keepAll,
    );
    const controller = new AbortController();
    const second = cache.get('k', waiter(controller.signal, start + 30), async () => 'unused', keepAll);
    await expect(second).rejects.toBeInstanceOf(WaitDeadlineError);
    expect(workSignal?.aborted).toBe(false);
    controller.abort();
    void first.catch(() => undefined);
  });

  it('lets work that a newer computation replaced end quietly when its last caller leaves', async () => {
    const cache = new VerificationCache<string>({ now: () => 0 });
    const controller = new AbortController();
    let firstSignal: AbortSignal | undefined;
    const gate = deferred<string>();
    const short = cache.get(
      'k',
      waiter(controller.signal, 100),
      (call) => {
        firstSignal = call.signal;
        return gate.promise;
      },
      keepAll,
    );
    const long = cache.get('k', waiter(never.signal, 10_000), async () => 'pass', keepAll);
    controller.abort(new Error('gave up'));
    await expect(short).rejects.toThrow('gave up');
    expect(firstSignal?.aborted).toBe(true);
    expect(await long).toBe('pass');
    // The abandoned work fails later: nobody is told twice.
    gate.reject(new Error('late failure'));
    await Promise.resolve();
  });
});
