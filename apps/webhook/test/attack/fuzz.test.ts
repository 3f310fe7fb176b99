// The short run of the fuzzer `pnpm soak` runs 100,000 times: hostile reviews made from real ones
// get a well-formed answer (an AdmissionReview, 200 or 4xx), never a crash, a 500 or a hang.
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fuzzedReview, random, wellFormed } from '../../soak/fuzz.js';
import { reviewFixture } from '../helpers.js';
import { type AttackTarget, startTarget } from './server.js';

let dir = '';
let target: AttackTarget;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signet-attack-fuzz-'));
  target = await startTarget(dir);
});

afterAll(async () => {
  await target?.signet.stop(0);
  await rm(dir, { recursive: true, force: true });
});

it('answers 2,000 fuzzed reviews with well-formed AdmissionReviews and keeps serving', async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const send = (body: Buffer) =>
    new Promise<{ status: number; body: string }>((resolve) => {
      const req = request(
        { host: '127.0.0.1', port: target.port, path: '/validate', method: 'POST', ca: target.ca, agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
          );
        },
      );
      req.on('error', (error) => resolve({ status: -1, body: String(error) }));
      req.setTimeout(15_000, () => {
        req.destroy();
        resolve({ status: -2, body: 'no answer within 15 s' });
      });
      req.end(body);
    });
  const rand = random(20261201);
  const bad: string[] = [];
  for (let batch = 0; batch < 250; batch++) {
    const bodies = Array.from({ length: 8 }, () => fuzzedReview(rand));
    const answers = await Promise.all(bodies.map(send));
    answers.forEach((answer, i) => {
      if (!wellFormed(answer.status, answer.body))
        bad.push(
          `${answer.status} ${answer.body.slice(0, 200)} <- ${bodies[i]?.toString('utf8').slice(0, 200)}`,
        );
    });
  }
  expect(bad.slice(0, 5)).toEqual([]);
  const ok = await send(Buffer.from(reviewFixture('replicaset-scale-down.json')));
  expect(ok.status).toBe(200);
  agent.destroy();
}, 120_000);
