// CEL in real worker threads (the CEL engine loaded in each): the event loop never runs an
// expression, a worker that overruns its deadline or whose caller gave up is stopped, the queue
// is bounded, and every failure of the pool is its own (CelWorkersError), never a verdict.
import { afterEach, describe, expect, it } from 'vitest';
import { CelSyntaxError, CelWorkers, type CelWorkersOptions } from '../../src/policy/cel-workers.js';

const l = Array.from({ length: 200 }, (_, i) => i);
const HEAVY = 'l.all(a, l.all(b, l.all(c, a + b + c >= 0)))';
const pools: CelWorkers[] = [];

function pool(options: CelWorkersOptions = {}): CelWorkers {
  const made = new CelWorkers({ workers: 1, ...options });
  pools.push(made);
  return made;
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe('CEL worker threads', () => {
  it('compile and evaluate in a worker started on first use, and refuse what does not parse', async () => {
    const events: string[] = [];
    const cel = pool({ onEvent: (event) => events.push(event.type) });
    expect(cel.stats).toEqual({ workers: 0, queued: 0 });
    const program = await cel.compile('x.startsWith("a")');
    expect(program.source).toBe('x.startsWith("a")');
    expect(await program.evaluate({ x: 'abc' })).toEqual({ passed: true });
    expect(await program.evaluate({ x: 'b' })).toEqual({
      passed: false,
      reason: 'CEL policy returned false',
    });
    await expect(cel.compile('1 +')).rejects.toThrow(CelSyntaxError);
    await expect(cel.compile('1 +')).rejects.toThrow('<input>:1:3');
    expect(cel.stats).toEqual({ workers: 1, queued: 0 });
    expect(events).toEqual(['started']);
  });

  it('stop a costly expression at its cost limit while the event loop goes on', async () => {
    const cel = pool({ costLimit: 20_000 });
    const program = await cel.compile(HEAVY);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 1);
    const outcome = await program.evaluate({ l });
    clearInterval(ticker);
    expect(outcome).toEqual({
      passed: false,
      reason: 'CEL evaluation stopped: it exceeded the cost limit of 20000 comprehension steps',
    });
    // The worker was evaluating; this thread was free the whole time.
    expect(ticks).toBeGreaterThan(0);
  });

  it('stop a worker that overruns its deadline, and answer the next request from a new one', async () => {
    const stopped: string[] = [];
    const cel = pool({
      costLimit: 1e12,
      evaluationTimeoutMs: 100,
      onEvent: (event) => event.type === 'stopped' && stopped.push(event.reason),
    });
    const program = await cel.compile(HEAVY);
    await expect(program.evaluate({ l })).rejects.toMatchObject({
      name: 'CelWorkersError',
      code: 'CEL_TIMEOUT',
      message: 'the CEL evaluation did not finish within 100 ms and was stopped',
    });
    expect(stopped).toEqual(['overran 100 ms']);
    expect(await program.evaluate({ l: [] })).toEqual({ passed: true });
    const slow = pool({ compileTimeoutMs: 1 });
    await expect(slow.compile(`[${'1,'.repeat(20_000)}1].size() > 0`)).rejects.toMatchObject({
      code: 'CEL_TIMEOUT',
      message: 'the CEL compile did not finish within 1 ms and was stopped',
    });
  });

  it('fail an evaluation that exhausts its worker memory, not the process', async () => {
    const cel = pool({ memoryLimitMb: 16, costLimit: 1e12, evaluationTimeoutMs: 20_000 });
    const program = await cel.compile(
      'l.map(a, l.map(b, l.map(c, string(a) + "/" + string(b) + "/" + string(c)))).size() > 0',
    );
    await expect(program.evaluate({ l })).rejects.toMatchObject({
      code: 'CEL_CRASHED',
      message: expect.stringMatching(/^the CEL worker stopped: .*memory/),
    });
    expect(await program.evaluate({ l: [] })).toEqual({ passed: false, reason: 'CEL policy returned false' });
  });

  it('refuse at once beyond the queue, and drop or stop what its caller gave up', async () => {
    const cel = pool({ costLimit: 1e12, maxQueued: 1 });
    const program = await cel.compile(HEAVY);
    const running = new AbortController();
    const first = program.evaluate({ l }, running.signal);
    const waiting = new AbortController();
    const second = program.evaluate({ l }, waiting.signal);
    // Settled below, after the aborts; handled now so that no rejection goes unhandled meanwhile.
    first.catch(() => undefined);
    second.catch(() => undefined);
    await expect(program.evaluate({ l })).rejects.toMatchObject({
      code: 'CEL_BUSY',
      message: '1 CEL evaluations are already waiting',
    });
    waiting.abort(new Error('answered'));
    await expect(second).rejects.toMatchObject({ code: 'CEL_CANCELLED', cause: new Error('answered') });
    expect(cel.stats).toEqual({ workers: 1, queued: 0 });
    running.abort(new Error('answered'));
    await expect(first).rejects.toMatchObject({ code: 'CEL_CANCELLED' });
    expect(cel.stats.workers).toBe(0);
    await expect(program.evaluate({ l }, AbortSignal.abort())).rejects.toMatchObject({
      code: 'CEL_CANCELLED',
    });
    expect(await program.evaluate({ l: [] })).toEqual({ passed: true });
  });

  it('fail what runs and waits when closed, and everything after', async () => {
    const cel = pool({ costLimit: 1e12 });
    const program = await cel.compile(HEAVY);
    const both = Promise.allSettled([program.evaluate({ l }), program.evaluate({ l })]);
    await cel.close();
    for (const settled of await both) {
      expect(settled).toMatchObject({ status: 'rejected', reason: { code: 'CEL_CLOSED' } });
    }
    await expect(cel.compile('true')).rejects.toMatchObject({ code: 'CEL_CLOSED' });
  });

  it('fail what waits when a worker cannot start', async () => {
    await expect(pool({ startupTimeoutMs: 1 }).compile('true')).rejects.toMatchObject({
      code: 'CEL_UNAVAILABLE',
      message: 'the CEL engine did not start within 1 ms',
    });
    // Too little memory to load the CEL engine (8 MiB; far less kills the process itself).
    await expect(pool({ memoryLimitMb: 8 }).compile('true')).rejects.toMatchObject({
      code: 'CEL_UNAVAILABLE',
      message: expect.stringMatching(/^the CEL engine did not start: /),
    });
  });

  it('keep nothing when asked to, and fail inputs that cannot be sent to a thread', async () => {
    const cel = pool({ maxPrograms: 0 });
    const program = await cel.compile('x == 1');
    expect(await program.evaluate({ x: 1 })).toEqual({ passed: true });
    const outcome = await program.evaluate({ x: () => 1 });
    expect(outcome).toMatchObject({
      passed: false,
      reason: expect.stringMatching(/^CEL evaluation failed: /),
    });
    expect(await program.evaluate({ x: 2 })).toEqual({ passed: false, reason: 'CEL policy returned false' });
  });
});
