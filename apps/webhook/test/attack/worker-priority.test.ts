// Every worker thread a running Signet starts yields to the event loop that answers the cheap
// reviews: on 2 cores, CUE, Rego and CEL workers kept busy by any caller of the admission port
// (validation floods, costly CEL inputs, large bodies) competed with it as equals, and the
// mixed-attack soak measured a scale-down p99 of 104-284 ms. Each worker lowers its own thread's
// priority (nice +10, Linux keeps one per thread); the event loop keeps its own. Read from /proc,
// as `ps -L` reads them, after a real Signet started each kind of worker.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, reviewFixture, threadPriorities } from '../helpers.js';
import { type AttackTarget, startTarget } from './server.js';

const POLICIES = `---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: {name: cue}
spec:
  images: [{glob: "cue.invalid/**"}]
  authorities: [{static: {action: pass}}]
  policy: {type: cue, data: 'a: 1'}
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: {name: cel}
spec:
  images: [{glob: "cel.invalid/**"}]
  authorities: [{static: {action: pass}}]
  policy: {type: cel, data: 'true'}
`;

let dir = '';
let target: AttackTarget;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signet-worker-priority-'));
  target = await startTarget(dir, {}, { policies: POLICIES });
  expect([...(target.signet.store.current?.broken.values() ?? [])]).toEqual([]);
}, 60_000);

afterAll(async () => {
  await target?.signet.stop(0);
  if (dir) await rm(dir, { recursive: true, force: true });
});

function policyReview(name: string, policy: { type: string; data: string }): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${name}`,
      kind: { group: 'policy.sigstore.dev', version: 'v1beta1', kind: 'ClusterImagePolicy' },
      resource: { group: 'policy.sigstore.dev', version: 'v1beta1', resource: 'clusterimagepolicies' },
      name,
      operation: 'CREATE',
      userInfo: { username: 'anyone' },
      object: {
        apiVersion: 'policy.sigstore.dev/v1beta1',
        kind: 'ClusterImagePolicy',
        metadata: { name },
        spec: {
          images: [{ glob: 'registry.example/**' }],
          authorities: [{ static: { action: 'pass' } }],
          policy,
        },
      },
      oldObject: null,
      dryRun: false,
    },
  });
}

async function allowed(path: string, body: string): Promise<void> {
  const response = await post(`https://127.0.0.1:${target.port}${path}?timeout=10s`, body, target.ca);
  expect(response.status).toBe(200);
  expect(response.json()).toMatchObject({ response: { allowed: true } });
}

describe.runIf(process.platform === 'linux')("Signet's worker threads", () => {
  it('all run at nice +10, the event loop at its own', async () => {
    const before = threadPriorities().main.nice;
    // The admission engines and CEL worker compiled the policy file's policies at start; a
    // validation starts the validation engines and CEL worker; a large body, a body-check worker.
    await allowed(
      '/validate-policy',
      policyReview('rego', { type: 'rego', data: 'package sigstore\nisCompliant := true' }),
    );
    await allowed('/validate-policy', policyReview('cel', { type: 'cel', data: 'true' }));
    const large = JSON.parse(reviewFixture('replicaset-scale-down.json'));
    large.request.object.metadata.annotations = { padding: 'x'.repeat(300_000) };
    await allowed('/validate', JSON.stringify(large));

    const { main, all } = threadPriorities();
    const workers = all.filter((thread) =>
      ['cue-engine', 'rego-engine', 'cel-worker', 'body-check'].includes(thread.name),
    );
    expect(new Set(workers.map((thread) => thread.name))).toEqual(
      new Set(['cue-engine', 'rego-engine', 'cel-worker', 'body-check']),
    );
    // The admission CEL worker and the validation one.
    expect(workers.filter((thread) => thread.name === 'cel-worker').length).toBeGreaterThanOrEqual(2);
    expect(workers.map((thread) => thread.nice)).toEqual(workers.map(() => Math.min(19, before + 10)));
    expect(main.nice).toBe(before);
  });
});
