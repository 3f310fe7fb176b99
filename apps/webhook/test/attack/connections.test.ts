// Issue 21, finding 9: 1,024 TCP connections that never send a TLS ClientHello filled the admission
// port's connection cap, and every new connection, the API server's included, was cut until Node's
// 120 s handshake timeout closed them. Now a source address holds a bounded share of the port, a
// connection still in its handshake is shed for a new one when the port is full, and one that does
// not finish its handshake within a few seconds is closed.
//
// Linux routes all of 127.0.0.0/8 to loopback, so each attacker Pod is a 127.0.0.x address of its
// own, and the API server is 127.0.0.1.
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { reviewFixture } from '../helpers.js';
import { type AttackTarget, startTarget } from './server.js';

let dir = '';
let target: AttackTarget;
const silent: Silent[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signet-attack-connections-'));
  target = await startTarget(dir);
});

afterAll(async () => {
  for (const c of silent) c.socket.destroy();
  await target?.signet.stop(0);
  await rm(dir, { recursive: true, force: true });
});

interface Silent {
  readonly socket: Socket;
  /** Milliseconds from connecting to the server closing it; undefined while open. */
  closedAfterMs: number | undefined;
}

/** A TCP connection from `source` that sends nothing, not even a ClientHello. */
function silentConnection(source: string): Promise<Silent> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect({ host: '127.0.0.1', port: target.port, localAddress: source });
    const silent: Silent = { socket, closedAfterMs: undefined };
    socket.on('error', () => undefined);
    socket.once('close', () => {
      silent.closedAfterMs = Date.now() - started;
    });
    socket.once('connect', () => resolve(silent));
    // A connection refused at once may close before (or instead of) 'connect'.
    socket.once('close', () => resolve(silent));
  });
}

function review(agent: Agent | false): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        localAddress: '127.0.0.1',
        port: target.port,
        path: '/validate?timeout=10s',
        method: 'POST',
        ca: target.ca,
        agent,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(-1));
    req.end(reviewFixture('replicaset-scale-down.json'));
  });
}

const open = (connections: readonly Silent[]) => connections.filter((c) => c.closedAfterMs === undefined);

it('1,500 silent connections from five Pods neither lock out the API server nor stay long', async () => {
  const sources = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6'];
  for (const source of sources) {
    silent.push(...(await Promise.all(Array.from({ length: 300 }, () => silentConnection(source)))));
  }
  await new Promise((resolve) => setTimeout(resolve, 200));

  // The API server, on fresh connections and on many kept-alive ones at once, is answered.
  const fresh = await Promise.all(Array.from({ length: 20 }, () => review(false)));
  expect(fresh.filter((status) => status !== 200)).toEqual([]);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const kept = await Promise.all(Array.from({ length: 300 }, () => review(agent)));
  agent.destroy();
  expect(kept.filter((status) => status !== 200)).toEqual([]);

  // One Pod holds at most its share of the port.
  const heldBy = (source: string) => open(silent.filter((c) => c.socket.localAddress === source)).length;
  expect(Math.max(...sources.map(heldBy))).toBeLessThanOrEqual(256);

  // Every silent connection is closed by the server within seconds, not Node's 120 s.
  const deadline = Date.now() + 15_000;
  while (open(silent).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  expect(open(silent).length).toBe(0);
  const longest = Math.max(...silent.map((c) => c.closedAfterMs ?? Number.POSITIVE_INFINITY));
  console.log(`silent connections: the longest lived ${longest} ms`);
  expect(longest).toBeLessThan(10_000);
}, 60_000);
