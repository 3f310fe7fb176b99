// The one elector of a process: one identity, one campaign per Lease, leader-only parts started
// when their Lease is taken and stopped when it is lost. The Lease here is a stand-in whose holder
// the test sets: the Lease protocol itself (take, renew, release, a killed leader taken over) runs
// against a real API server in e2e/test/operations.test.ts and e2e/test/signet-audit.test.ts.
import { describe, expect, it } from 'vitest';
import { LeaderElector, type LeaseRequest, replicaIdentity } from '../../src/lifecycle/leader-elector.js';
import type { Part } from '../../src/lifecycle/part.js';
import { createLogger } from '../../src/logger.js';
import { LogCapture } from '../helpers.js';

function setup() {
  const events: string[] = [];
  const requests: LeaseRequest[] = [];
  const leases = new Map<string, { started: boolean; stopped: boolean; request: LeaseRequest }>();
  const logs = new LogCapture();
  const elector = new LeaderElector({
    identity: 'replica-a',
    logger: createLogger({ destination: logs }),
    openLease: (request) => {
      requests.push(request);
      const lease = { started: false, stopped: false, request };
      leases.set(request.name, lease);
      return {
        start: () => {
          lease.started = true;
        },
        stop: async () => {
          lease.stopped = true;
          request.onChange(false);
        },
      };
    },
  });
  const signals: AbortSignal[] = [];
  const part = (name: string, lease: string, failStart = false): Part => ({
    name,
    leader: { lease, durationMs: 15_000 },
    async start(signal) {
      signals.push(signal);
      if (failStart) throw new Error(`${name} cannot start`);
      events.push(`start ${name}`);
    },
    async stop() {
      events.push(`stop ${name}`);
    },
  });
  /** Sets whether this replica holds `lease`, and waits for the parts to follow. */
  const hold = async (lease: string, leading: boolean) => {
    leases.get(lease)?.request.onChange(leading);
    await new Promise((resolve) => setTimeout(resolve, 5));
  };
  return { elector, events, requests, leases, logs, signals, part, hold };
}

describe('LeaderElector', () => {
  it('runs the parts of a Lease while it is held: in order when taken, in reverse when lost, again when retaken', async () => {
    const { elector, events, requests, leases, signals, part, hold } = setup();
    elector.serve(part('status', 'signet-policy-status'));
    elector.serve(part('reports', 'signet-policy-status'));
    expect(requests.map((r) => [r.name, r.identity, r.durationMs])).toEqual([
      ['signet-policy-status', 'replica-a', 15_000],
    ]);
    expect(leases.get('signet-policy-status')?.started).toBe(true);
    expect(events).toEqual([]);
    await hold('signet-policy-status', true);
    expect(events).toEqual(['start status', 'start reports']);
    await hold('signet-policy-status', false);
    expect(events.slice(2)).toEqual(['stop reports', 'stop status']);
    expect(signals.map((s) => [s.aborted, (s.reason as Error).message])).toEqual([
      [true, 'the Lease was lost'],
      [true, 'the Lease was lost'],
    ]);
    await hold('signet-policy-status', true);
    expect(events.slice(4)).toEqual(['start status', 'start reports']);
    expect(signals.slice(2).map((s) => s.aborted)).toEqual([false, false]);
  });

  it('campaigns for each Lease apart, with one identity; a part served while leading starts at once', async () => {
    const { elector, events, requests, part, hold } = setup();
    elector.serve(part('status', 'signet-policy-status'));
    elector.serve(part('scan', 'signet-audit'));
    expect(requests.map((r) => [r.name, r.identity])).toEqual([
      ['signet-policy-status', 'replica-a'],
      ['signet-audit', 'replica-a'],
    ]);
    await hold('signet-audit', true);
    expect(events).toEqual(['start scan']);
    elector.serve(part('more scanning', 'signet-audit'));
    await hold('signet-audit', true);
    expect(events).toEqual(['start scan', 'start more scanning']);
  });

  it('withdraws a part: stopped if it runs; the Lease released once no part needs it', async () => {
    const { elector, events, leases, part, hold } = setup();
    const status = part('status', 'signet-policy-status');
    const reports = part('reports', 'signet-policy-status');
    elector.serve(status);
    elector.serve(reports);
    await hold('signet-policy-status', true);
    await elector.withdraw(reports);
    expect(events.slice(2)).toEqual(['stop reports']);
    expect(leases.get('signet-policy-status')?.stopped).toBe(false);
    await elector.withdraw(status);
    expect(events.slice(3)).toEqual(['stop status']);
    expect(leases.get('signet-policy-status')?.stopped).toBe(true);
    await elector.withdraw(status);
    expect(events).toHaveLength(4);
  });

  it('logs a part that fails to start, and does not stop it later', async () => {
    const { elector, events, logs, part, hold } = setup();
    elector.serve(part('broken', 'signet-audit', true));
    elector.serve(part('scan', 'signet-audit'));
    await hold('signet-audit', true);
    await hold('signet-audit', false);
    expect(events).toEqual(['start scan', 'stop scan']);
    expect(logs.lines).toMatchObject([{ part: 'broken', msg: 'a leader-only part did not start' }]);
  });

  it('refuses a part that does not need the leader', () => {
    const { elector } = setup();
    expect(() => elector.serve({ name: 'ports', start() {}, stop() {} })).toThrow(
      '"ports" does not need the leader',
    );
  });
});

describe('replicaIdentity', () => {
  it('is the configured name (the Pod name), else the host name with a random suffix', () => {
    expect(replicaIdentity('signet-7d9f-abcde')).toBe('signet-7d9f-abcde');
    expect(replicaIdentity(undefined, () => Buffer.from([0xde, 0xad, 0xbe, 0xef]))).toMatch(/_deadbeef$/);
    expect(replicaIdentity(undefined)).not.toBe(replicaIdentity(undefined));
  });
});
