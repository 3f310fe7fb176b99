// Issue 21, finding 7: CEL ran on the event loop with no cost limit. A 1.3 KB expression (three
// nested all() over 200 elements) evaluated for 6.4 s, and a ReplicaSet scale-down sent meanwhile
// waited 6.2 s for its answer. Here a spec-level CEL policy over the Pod's 200 env entries, in a
// real Signet over HTTPS: the expression is stopped by its cost limit (a policy failure) in a
// worker thread, and a scale-down sent while it is evaluated is answered first.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { post, reviewFixture } from '../helpers.js';
import { type AttackTarget, startTarget } from './server.js';

const ENV = 'spec.containers[0].env';
const HEAVY = `${ENV}.all(a, ${ENV}.all(b, ${ENV}.all(c, a.name != "" || b.name != "" || c.name != "")))`;
const CEL_POLICY = `---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: {name: cel-heavy}
spec:
  images: [{glob: "cel.invalid/**"}]
  authorities: [{static: {action: pass}}]
  policy:
    type: cel
    includeSpec: true
    data: '${HEAVY}'
`;

let dir = '';
let target: AttackTarget;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signet-attack-cel-'));
  target = await startTarget(dir, {}, { policies: CEL_POLICY });
  expect([...(target.signet.store.current?.broken.values() ?? [])]).toEqual([]);
}, 60_000);

afterAll(async () => {
  await target?.signet.stop(0);
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function timed(body: string) {
  const response = await post(`https://127.0.0.1:${target.port}/validate?timeout=10s`, body, target.ca);
  expect(response.status).toBe(200);
  const { response: answer } = response.json() as {
    response: { allowed: boolean; status?: { message: string } };
  };
  return { answer, at: performance.now() };
}

function heavyPod(): string {
  const review = JSON.parse(reviewFixture('pod-create.json'));
  const container = review.request.object.spec.containers[0];
  review.request.object.spec.containers = [
    {
      ...container,
      image: `cel.invalid/app@sha256:${'c'.repeat(64)}`,
      env: Array.from({ length: 200 }, (_, i) => ({ name: `E${i}`, value: String(i) })),
    },
  ];
  review.request.object.spec.initContainers = undefined;
  return JSON.stringify(review);
}

it('stops a costly CEL expression at its cost limit, and answers a scale-down sent meanwhile first', async () => {
  const heavy = timed(heavyPod());
  // The expression is being evaluated (its review parsed in a few milliseconds)...
  await new Promise((resolve) => setTimeout(resolve, 100));
  // ...when the deployment controller scales a ReplicaSet down.
  const scaleDown = await timed(reviewFixture('replicaset-scale-down.json'));
  expect(scaleDown.answer.allowed).toBe(true);
  const denied = await heavy;
  expect(scaleDown.at).toBeLessThan(denied.at);
  expect(denied.answer.allowed).toBe(false);
  // The cost limit stops it (about a quarter of a second of a worker); on a machine loaded enough
  // to make 250,000 steps take longer than the 2 s deadline, the deadline does. Either way the
  // evaluation is stopped in its worker and the scale-down did not wait for it.
  expect(denied.answer.status?.message).toMatch(
    /policy "cel-heavy" \(enforce\): (spec\.policy failed: CEL evaluation stopped: it exceeded the cost limit of 250000 comprehension steps|infrastructure failure: spec\.policy failed: the CEL evaluation did not finish within 2000 ms and was stopped)$/,
  );
}, 60_000);
