// The owner of a process's parts: order of starts and stops, a failed start, leader-only parts
// handed to the elector at their place. The parts here are small recorders; the real parts and
// their order run in every test that starts Signet (test/signet.test.ts, test/shutdown.test.ts).
import { describe, expect, it } from 'vitest';
import type { Elector } from '../../src/lifecycle/lifecycle.js';
import { Lifecycle } from '../../src/lifecycle/lifecycle.js';
import type { Election, Part } from '../../src/lifecycle/part.js';
import { createLogger } from '../../src/logger.js';
import { LogCapture } from '../helpers.js';

function recorder() {
  const events: string[] = [];
  const signals = new Map<string, AbortSignal>();
  const part = (name: string, fail?: 'start' | 'stop', leader?: Election): Part => ({
    name,
    ...(leader ? { leader } : {}),
    async start(signal) {
      await Promise.resolve();
      signals.set(name, signal);
      if (fail === 'start') throw new Error(`${name} cannot start`);
      events.push(`start ${name}`);
    },
    async stop(graceMs) {
      events.push(`stop ${name} (${graceMs} ms)`);
      if (fail === 'stop') throw new Error(`${name} cannot stop`);
    },
  });
  const elector: Elector = {
    serve: (p) => void events.push(`serve ${p.name}`),
    withdraw: async (p) => void events.push(`withdraw ${p.name}`),
  };
  return { events, signals, part, elector };
}

describe('Lifecycle', () => {
  it('starts the parts in order, hands leader-only ones to the elector, and stops in reverse once', async () => {
    const { events, signals, part, elector } = recorder();
    const lease = { lease: 'signet-policy-status', durationMs: 15_000 };
    const logger = createLogger({ level: 'silent' });
    const lifecycle = new Lifecycle([part('pools'), part('ports'), part('status', undefined, lease)], {
      logger,
      elector,
    });
    expect(lifecycle.names).toEqual(['pools', 'ports', 'status']);
    await lifecycle.start();
    expect(events).toEqual(['start pools', 'start ports', 'serve status']);
    expect(signals.get('ports')?.aborted).toBe(false);
    await Promise.all([lifecycle.stop(3000), lifecycle.stop(0)]);
    expect(events.slice(3)).toEqual(['withdraw status', 'stop ports (3000 ms)', 'stop pools (3000 ms)']);
    expect(signals.get('ports')?.aborted).toBe(true);
  });

  it('stops the parts already started when one fails to start, and throws its error', async () => {
    const { events, part } = recorder();
    const lifecycle = new Lifecycle([part('pools'), part('ports', 'start'), part('watches')], {
      logger: createLogger({ level: 'silent' }),
    });
    await expect(lifecycle.start()).rejects.toThrow('ports cannot start');
    expect(events).toEqual(['start pools', 'stop pools (0 ms)']);
  });

  it('still stops the others when one fails to stop, and logs it', async () => {
    const { events, part } = recorder();
    const logs = new LogCapture();
    const lifecycle = new Lifecycle([part('pools'), part('ports', 'stop'), part('watches')], {
      logger: createLogger({ destination: logs }),
    });
    await lifecycle.start();
    await lifecycle.stop(0);
    expect(events.slice(3)).toEqual(['stop watches (0 ms)', 'stop ports (0 ms)', 'stop pools (0 ms)']);
    expect(logs.lines).toMatchObject([{ part: 'ports', msg: 'a part did not stop cleanly' }]);
  });

  it('refuses a leader-only part when there is no leader election (no cluster)', () => {
    const { part } = recorder();
    const status = part('policy status', undefined, { lease: 'signet-policy-status', durationMs: 15_000 });
    expect(() => new Lifecycle([status], { logger: createLogger({ level: 'silent' }) })).toThrow(
      '"policy status" runs on the leader only, and there is no leader election',
    );
  });
});
