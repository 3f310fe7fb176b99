// Issue 9, findings 3 and 4: bodies that are too large, too slow or too many are refused before
// they can take the server's memory or its event loop, and the answer says which.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, reviewFixture } from '../helpers.js';
import { type AttackTarget, rawConnection, startTarget, statusOf } from './server.js';

let dir = '';
let target: AttackTarget;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signet-attack-bodies-'));
  target = await startTarget(dir);
});

afterAll(async () => {
  await target?.signet.stop(0);
  await rm(dir, { recursive: true, force: true });
});

function headers(length: number | 'chunked'): string {
  const size = length === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`;
  return `POST /validate HTTP/1.1\r\nHost: signet\r\nContent-Type: application/json\r\n${size}\r\n\r\n`;
}

describe('request bodies', () => {
  it('a declared body over 4 MiB (an AdmissionReview is at most two 1.5 MiB objects) is refused with 413 before it is read', async () => {
    const socket = await rawConnection(target);
    socket.write(headers(9_300_000));
    socket.write(Buffer.alloc(64 * 1024, 0x20));
    const answer = await statusOf(socket, 3000);
    expect(answer).toMatchObject({ status: 413, closed: true });
  });

  it('a chunked body is counted as it arrives and cut off at the limit', async () => {
    const socket = await rawConnection(target);
    socket.write(headers('chunked'));
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    for (let i = 0; i < 5; i++)
      socket.write(`${chunk.length.toString(16)}\r\n${chunk.toString('latin1')}\r\n`);
    expect(await statusOf(socket, 5000)).toMatchObject({ status: 413, closed: true });
  });

  it('a stalled body is answered 408 at the body deadline, not held until the request timeout', async () => {
    const quick = await startTarget(await mkdtemp(join(dir, 'quick-')));
    try {
      const socket = await rawConnection(quick);
      socket.write(headers(100_000));
      socket.write(Buffer.alloc(90_000, 0x20));
      const answer = await statusOf(socket, 8000);
      expect(answer).toMatchObject({ status: 408, closed: true });
      // the default deadline is 5 s, far below the 40 s request timeout that held such bodies before
      expect(answer.afterMs).toBeLessThan(7000);
    } finally {
      await quick.signet.stop(0);
    }
  });

  it('while the body budget is taken by stalled bodies, more are refused with 503 and reviews that fit still pass', async () => {
    const sockets = await Promise.all(Array.from({ length: 20 }, () => rawConnection(target)));
    const answers = sockets.map((socket) => {
      socket.write(headers(4_000_000));
      socket.write(Buffer.alloc(16 * 1024, 0x20));
      return statusOf(socket, 8000);
    });
    const results = await Promise.all(answers);
    // 32 MiB hold 8 bodies of 4 MB; the others are refused at once
    expect(results.filter((r) => r.status === 503).length).toBe(12);
    expect(results.filter((r) => r.status === 408).length).toBe(8);
    const ok = await post(
      `https://127.0.0.1:${target.port}/validate`,
      reviewFixture('replicaset-scale-down.json'),
      target.ca,
    );
    expect(ok.status).toBe(200);
  }, 20_000);
});
