// Issue 9, finding 2: metric label values come from bounded sets, whatever the client sends.
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { reviewFixture } from '../helpers.js';
import { type AttackTarget, startTarget } from './server.js';

let dir = '';
let target: AttackTarget;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signet-attack-labels-'));
  target = await startTarget(dir);
});

afterAll(async () => {
  await target?.signet.stop(0);
  await rm(dir, { recursive: true, force: true });
});

it('3,000 distinct request kinds, some a hundred kilobytes long, make a handful of series', async () => {
  const base = JSON.parse(reviewFixture('pod-create.json'));
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const send = (body: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: target.port, path: '/validate', method: 'POST', ca: target.ca, agent },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const statuses: number[] = [];
  for (let batch = 0; batch < 30; batch++) {
    const bodies = Array.from({ length: 100 }, (_, i) => {
      const n = batch * 100 + i;
      const review = structuredClone(base);
      review.request.uid = `uid-${n}`;
      review.request.kind.kind = n % 100 === 0 ? `Kind${'x'.repeat(100_000)}${n}` : `Kind${n}`;
      review.request.object.kind = review.request.kind.kind;
      review.request.resource.resource = n % 2 === 0 ? 'pods' : `things${n}`;
      return JSON.stringify(review);
    });
    statuses.push(...(await Promise.all(bodies.map(send))));
  }
  agent.destroy();
  expect(statuses.every((s) => s === 200)).toBe(true);
  const text = await target.metrics.registry.getSingleMetricAsString('signet_admission_requests_total');
  const series = text.split('\n').filter((line) => line.startsWith('signet_admission_requests_total{'));
  expect(series.length).toBeLessThanOrEqual(4);
  const kinds = new Set(series.map((line) => /kind="([^"]*)"/.exec(line)?.[1]));
  expect([...kinds].sort()).toEqual(['Pod', 'other']);
}, 60_000);
