// The composition root's lifecycle in one process: ready once policies are loaded, not ready as
// soon as a shutdown starts while reviews are still answered (closing their connections), then
// stopped.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startTarget } from './attack/server.js';
import { post, reviewFixture } from './helpers.js';

let dir = '';

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('drains on shutdown: not ready, still answering with Connection: close, then closed', async () => {
  dir = await mkdtemp(join(tmpdir(), 'signet-lifecycle-'));
  const target = await startTarget(dir, { 'shutdown-drain': '600ms', 'shutdown-grace': '1s' });
  const ops = `http://127.0.0.1:${target.signet.servers.opsPort}`;
  const base = `https://127.0.0.1:${target.port}`;
  expect((await fetch(`${ops}/readyz`)).status).toBe(200);
  expect((await fetch(`${ops}/healthz`)).status).toBe(200);
  expect((await fetch(`${ops}/nope`)).status).toBe(404);
  expect((await fetch(`${ops}/readyz`, { method: 'POST' })).status).toBe(405);
  const shutdown = target.signet.shutdown();
  const readiness = await fetch(`${ops}/readyz`);
  expect(readiness.status).toBe(503);
  expect(await readiness.text()).toBe('not ready: shutting down');
  const during = await post(`${base}/validate`, reviewFixture('replicaset-scale-down.json'), target.ca);
  expect(during.status).toBe(200);
  expect(during.headers.connection).toBe('close');
  await shutdown;
  await expect(
    post(`${base}/validate`, reviewFixture('replicaset-scale-down.json'), target.ca),
  ).rejects.toThrow(/ECONNREFUSED/);
});
