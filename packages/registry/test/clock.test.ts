import { describe, expect, it } from 'vitest';
import { systemClock } from '../src/clock.js';

describe('systemClock', () => {
  it('sleeps', async () => {
    const started = systemClock.now();
    await systemClock.sleep(20, new AbortController().signal);
    expect(systemClock.now() - started).toBeGreaterThanOrEqual(15);
  });

  it('rejects at once with the reason of an aborted signal', async () => {
    const reason = new Error('stop');
    await expect(systemClock.sleep(10_000, AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it('rejects when aborted while sleeping', async () => {
    const controller = new AbortController();
    const sleeping = systemClock.sleep(10_000, controller.signal);
    controller.abort(new Error('later'));
    await expect(sleeping).rejects.toThrow('later');
  });
});
