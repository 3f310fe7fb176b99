// Every rule of the admission contract through the real HTTPS server, with policies loaded from
// YAML, a real registry, images pushed by crane and signatures made by the real cosign CLI.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { parseAdmissionReviewJson } from '@signet/k8s-types';
import type * as Testbed from '@signet/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createCertificateAuthority,
  type IssuedCertificate,
  issueServingCertificate,
} from '../../src/certificates.js';
import { serveConfigFrom } from '../../src/commands/serve-config.js';
import { createLogger } from '../../src/logger.js';
import { SignetMetrics } from '../../src/metrics.js';
import { parsePolicyYaml } from '../../src/policy/policy-file.js';
import { type RunningSignet, startSignet } from '../../src/signet.js';
import { LogCapture, post } from '../helpers.js';
import { CONTROLLER, podSpec, review, workload } from '../reviews.js';

let testbed: typeof Testbed;
let group: Testbed.ProcessGroup | undefined;
let runDir = '';
let ca: IssuedCertificate;
let signet: RunningSignet;
let base = '';
let host = '';
let signed = '';
let unsigned = '';
let signedTag = '';
let silent: Server;
let silentHost = '';
const logs = new LogCapture();

async function push(registry: Testbed.Registry, crane: string, repo: string, tag: string) {
  const digest = await testbed.pushRandomImage(registry, repo, tag, { crane, workDir: runDir });
  return `${registry.host}/${repo}@${digest}`;
}

beforeAll(async () => {
  testbed = await import('@signet/testbed');
  const { crane } = await testbed.ensureTools(['crane', 'cosign', 'registry'], {
    onProgress: (event) => console.log(`testbed: ${event.message}`),
  });
  runDir = await testbed.createRunDir('signet-webhook-admission-');
  group = new testbed.ProcessGroup({ runDir, graceMs: 2000 });
  const registry = await testbed.startRegistry({ referrers: false, group });
  host = registry.host;
  const cosign = await testbed.createCosign({ workDir: runDir });
  const key = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
  signed = await push(registry, crane, 'team/app', 'v2');
  signedTag = `${host}/team/app:v2`;
  unsigned = await push(registry, crane, 'team/app', 'v1');
  await cosign.signLegacyKeyed(signed, key);
  const warned = await push(registry, crane, 'warn/app', 'v1');
  expect(warned).toContain('/warn/app@');
  silent = createServer(() => undefined).listen(0, '127.0.0.1');
  await new Promise((resolve) => silent.once('listening', resolve));
  silentHost = `127.0.0.1:${(silent.address() as { port: number }).port}`;

  const publicKey = (await readFile(key.publicKey, 'utf8')).trim().split('\n').join('\n          ');
  const yaml = `
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: release }
spec:
  images: [{ glob: "${host}/team/**" }, { glob: "${silentHost}/**" }]
  authorities:
    - name: release-key
      key:
        data: |
          ${publicKey}
---
apiVersion: policy.sigstore.dev/v1alpha1
kind: ClusterImagePolicy
metadata: { name: warned }
spec:
  mode: warn
  images: [{ glob: "${host}/warn/**" }]
  authorities:
    - key:
        data: |
          ${publicKey}
`;
  expect(parsePolicyYaml(yaml, 'signet-system').problems).toEqual([]);
  await writeFile(join(runDir, 'policies.yaml'), yaml);
  ca = await createCertificateAuthority('signet-test', 1);
  const serving = await issueServingCertificate(ca, ['127.0.0.1'], 1);
  await writeFile(join(runDir, 'tls.crt'), serving.cert);
  await writeFile(join(runDir, 'tls.key'), serving.key);
  // The same composition root as `signet serve`, from the same flags.
  const config = serveConfigFrom(
    {
      port: '0',
      'ops-port': '0',
      host: '127.0.0.1',
      namespace: 'signet-system',
      'policy-file': [join(runDir, 'policies.yaml')],
      'tls-cert-file': join(runDir, 'tls.crt'),
      'tls-key-file': join(runDir, 'tls.key'),
      'insecure-registry': [host, silentHost],
    },
    {},
  );
  signet = await startSignet(config, {
    logger: createLogger({ destination: logs }),
    metrics: new SignetMetrics({ defaultMetrics: false }),
  });
  expect(signet.store.current?.policySet.policies.map((p) => p.name)).toEqual(['release', 'warned']);
  base = `https://127.0.0.1:${signet.servers.port}`;
}, 30 * 60_000);

afterAll(async () => {
  silent?.close();
  await signet?.stop(1000);
  await group?.stopAll();
  if (runDir) await rm(runDir, { recursive: true, force: true });
});

interface Answer {
  allowed: boolean;
  status?: { code: number; message: string };
  warnings?: string[];
  patch?: string;
  patchType?: string;
  uid: string;
}

async function admit(body: string, endpoint = 'validate', timeout = '10s'): Promise<Answer> {
  const answer = await post(`${base}/${endpoint}?timeout=${timeout}`, body, ca.cert);
  expect(answer.status).toBe(200);
  return answer.json().response as Answer;
}

function lastLogFor(uid: string) {
  return logs.lines.filter((l) => l.msg === 'admission' && l.uid === uid).at(-1);
}

describe('rule 3: CREATE of every covered kind verifies every image', () => {
  it.each([
    'Pod',
    'Deployment',
    'ReplicaSet',
    'StatefulSet',
    'DaemonSet',
    'Job',
    'CronJob',
    'ReplicationController',
  ])('%s', async (kind) => {
    expect(await admit(review(kind, 'CREATE', workload(kind, signed)))).toMatchObject({ allowed: true });
    const denied = await admit(review(kind, 'CREATE', workload(kind, unsigned)));
    expect(denied.allowed).toBe(false);
    const path =
      kind === 'Pod'
        ? 'spec'
        : kind === 'CronJob'
          ? 'spec.jobTemplate.spec.template.spec'
          : 'spec.template.spec';
    expect(
      denied.status?.message?.startsWith(
        `${path}.containers[0].image ${unsigned}: policy "release" (enforce): `,
      ),
    ).toBe(true);
    expect(denied.status?.message).toMatch(/no valid signature|no signature/);
  });
});

describe('the stuck-rollout rules', () => {
  it('rule 4: the deployment controller scaling an unsigned ReplicaSet down is admitted without verification', async () => {
    const old = workload('ReplicaSet', unsigned, {
      replicas: 2,
      owner: 'Deployment',
      annotations: { 'deployment.kubernetes.io/desired-replicas': '2' },
    });
    const next = workload('ReplicaSet', unsigned, {
      replicas: 1,
      owner: 'Deployment',
      annotations: { 'deployment.kubernetes.io/desired-replicas': '2' },
    });
    const body = review('ReplicaSet', 'UPDATE', next, old, { user: CONTROLLER });
    const answer = await admit(body);
    expect(answer).toEqual({ uid: answer.uid, allowed: true });
    expect(lastLogFor(answer.uid)).toMatchObject({
      decision: 'allowed',
      rule: 'scale-down',
      user: CONTROLLER,
    });
  });

  it('rule 4: an annotation-only write at the same replica count is admitted', async () => {
    const old = workload('ReplicaSet', unsigned, {
      owner: 'Deployment',
      annotations: { 'deployment.kubernetes.io/max-replicas': '3' },
    });
    const next = workload('ReplicaSet', unsigned, {
      owner: 'Deployment',
      annotations: { 'deployment.kubernetes.io/max-replicas': '4' },
    });
    const answer = await admit(review('ReplicaSet', 'UPDATE', next, old, { user: CONTROLLER }));
    expect(answer.allowed).toBe(true);
    expect(lastLogFor(answer.uid)).toMatchObject({ rule: 'template-unchanged' });
  });

  it('rule 7 wins over 4: lowering replicas and swapping the image is verified', async () => {
    const old = workload('ReplicaSet', signed, { replicas: 2, owner: 'Deployment' });
    const next = workload('ReplicaSet', unsigned, { replicas: 1, owner: 'Deployment' });
    expect(await admit(review('ReplicaSet', 'UPDATE', next, old))).toMatchObject({ allowed: false });
  });

  it('rule 5: the controller raising an owned ReplicaSet is admitted with a warning', async () => {
    const old = workload('ReplicaSet', unsigned, { replicas: 1, owner: 'Deployment' });
    const next = workload('ReplicaSet', unsigned, { replicas: 2, owner: 'Deployment' });
    const answer = await admit(review('ReplicaSet', 'UPDATE', next, old, { user: CONTROLLER }));
    expect(answer.allowed).toBe(true);
    expect(answer.warnings?.[0]).toMatch(/raised from 1 to 2 by its controller Deployment\/foo-bar/);
  });

  it('rule 6: scaling up a top-level Deployment with an unsigned image is verified (denied)', async () => {
    const old = workload('Deployment', unsigned, { replicas: 1 });
    const next = workload('Deployment', unsigned, { replicas: 3 });
    expect(await admit(review('Deployment', 'UPDATE', next, old))).toMatchObject({ allowed: false });
  });

  it('rule 7: rollout undo back to the unsigned template is denied at the Deployment', async () => {
    const old = workload('Deployment', signed);
    const next = workload('Deployment', unsigned);
    const answer = await admit(review('Deployment', 'UPDATE', next, old));
    expect(answer.allowed).toBe(false);
    expect(answer.status?.message).toContain('spec.template.spec.containers[0].image');
  });

  it('label and annotation edits on a non-compliant Deployment are admitted', async () => {
    const old = workload('Deployment', unsigned);
    const next = workload('Deployment', unsigned, {
      labels: { app: 'foo-bar', team: 'x' },
      annotations: { note: 'y' },
    });
    expect(await admit(review('Deployment', 'UPDATE', next, old))).toMatchObject({ allowed: true });
  });
});

describe('the quick path', () => {
  it('answers every decision with nothing to verify exactly as the full path does, and leaves the rest to it', async () => {
    const context = () => ({
      signal: new AbortController().signal,
      deadline: Date.now() + 10_000,
      budgetMs: 10_000,
    });
    const owned = (replicas: number, image = unsigned) =>
      workload('ReplicaSet', image, { replicas, owner: 'Deployment' });
    const cheap = [
      review('ReplicaSet', 'UPDATE', owned(1), owned(2), { user: CONTROLLER }), // scale-down
      review('ReplicaSet', 'UPDATE', owned(2), owned(1), { user: CONTROLLER }), // raised, with a warning
      review(
        'Deployment',
        'UPDATE',
        { ...workload('Deployment', unsigned), status: { replicas: 3 } },
        workload('Deployment', unsigned),
        { subResource: 'status' },
      ),
      review(
        'Deployment',
        'UPDATE',
        workload('Deployment', signed, { deleting: true }),
        workload('Deployment', unsigned),
      ),
      review(
        'Deployment',
        'UPDATE',
        workload('Deployment', unsigned, { labels: { app: 'foo-bar', team: 'x' } }),
        workload('Deployment', unsigned),
      ),
    ];
    const verified = [
      review('ReplicaSet', 'UPDATE', owned(1), owned(2, signed)), // the image changed
      review(
        'Deployment',
        'UPDATE',
        workload('Deployment', unsigned, { replicas: 3 }),
        workload('Deployment', unsigned),
      ),
      review('Pod', 'CREATE', workload('Pod', signed)),
    ];
    for (const endpoint of ['validate', 'mutate'] as const) {
      for (const body of cheap) {
        const request = parseAdmissionReviewJson(Buffer.from(body)).request;
        const quick = signet.service.quick(endpoint, request);
        expect(quick).toBeDefined();
        expect(quick).toEqual(await signet.service.review(endpoint, request, context()));
      }
      for (const body of verified) {
        expect(
          signet.service.quick(endpoint, parseAdmissionReviewJson(Buffer.from(body)).request),
        ).toBeUndefined();
      }
    }
  });
});

describe('Pods and subresources', () => {
  it('rule 1: objects being deleted are admitted', async () => {
    const old = workload('Deployment', unsigned);
    const next = workload('Deployment', signed, { deleting: true });
    expect(await admit(review('Deployment', 'UPDATE', next, old))).toMatchObject({ allowed: true });
  });

  it('rule 2: status updates are admitted', async () => {
    const old = workload('Deployment', unsigned);
    const next = { ...workload('Deployment', unsigned), status: { replicas: 3 } };
    const answer = await admit(review('Deployment', 'UPDATE', next, old, { subResource: 'status' }));
    expect(answer.allowed).toBe(true);
    expect(lastLogFor(answer.uid)).toMatchObject({ rule: 'status-or-scale-subresource' });
  });

  it('rule 8: removing a finalizer from a non-compliant Pod is admitted', async () => {
    const old = {
      ...workload('Pod', unsigned),
      metadata: { name: 'p', namespace: 'test', finalizers: ['batch.kubernetes.io/job-tracking'] },
    };
    const next = { ...workload('Pod', unsigned), metadata: { name: 'p', namespace: 'test' } };
    const answer = await admit(review('Pod', 'UPDATE', next, old));
    expect(answer.allowed).toBe(true);
    expect(lastLogFor(answer.uid)).toMatchObject({ rule: 'pod-images-unchanged' });
  });

  it('rule 9: changing a Pod image verifies only the changed image', async () => {
    const old = workload('Pod', unsigned);
    const next = { ...old, spec: podSpec(signed) };
    expect(await admit(review('Pod', 'UPDATE', next, old))).toMatchObject({ allowed: true });
    const back = await admit(review('Pod', 'UPDATE', old, next));
    expect(back.allowed).toBe(false);
  });

  it('rule 10: kubectl debug with a signed image on a non-compliant Pod is admitted, an unsigned one denied', async () => {
    const old = workload('Pod', unsigned);
    const withDebug = (image: string) => ({
      ...old,
      spec: podSpec(unsigned, {
        ephemeralContainers: [{ name: 'debugger', image, targetContainerName: 'app' }],
      }),
    });
    const ok = await admit(
      review('Pod', 'UPDATE', withDebug(signed), old, { subResource: 'ephemeralcontainers' }),
    );
    expect(ok.allowed).toBe(true);
    const bad = await admit(
      review('Pod', 'UPDATE', withDebug(unsigned), old, { subResource: 'ephemeralcontainers' }),
    );
    expect(bad.allowed).toBe(false);
    expect(bad.status?.message).toMatch(/^spec\.ephemeralContainers\[0\]\.image /);
  });
});

describe('modes, no match, mutation and timeouts', () => {
  it('warn mode admits with one warning per failing image', async () => {
    const image = `${host}/warn/app:v1`;
    const answer = await admit(review('Pod', 'CREATE', workload('Pod', image)));
    expect(answer.allowed).toBe(true);
    expect(answer.warnings).toHaveLength(1);
    expect(answer.warnings?.[0]).toMatch(/^spec\.containers\[0\]\.image .*: policy "warned" \(warn\): no /);
  });

  it('an image no policy matches is denied (no-match-policy defaults to deny)', async () => {
    const answer = await admit(
      review('Pod', 'CREATE', workload('Pod', `${host}/other/app@sha256:${'b'.repeat(64)}`)),
    );
    expect(answer.allowed).toBe(false);
    expect(answer.status?.message).toContain('no ClusterImagePolicy matches (no-match-policy: deny)');
  });

  it('the mutating endpoint pins a verified tag to its digest, touching only that field', async () => {
    const answer = await admit(review('Deployment', 'CREATE', workload('Deployment', signedTag)), 'mutate');
    expect(answer.allowed).toBe(true);
    expect(answer.patchType).toBe('JSONPatch');
    const patch = JSON.parse(Buffer.from(answer.patch ?? '', 'base64').toString('utf8'));
    const digest = signed.split('@')[1];
    expect(patch).toEqual([
      { op: 'test', path: '/spec/template/spec/containers/0/image', value: signedTag },
      { op: 'replace', path: '/spec/template/spec/containers/0/image', value: `${signedTag}@${digest}` },
    ]);
    // never for an unchanged template (rule 4)
    const old = workload('Deployment', signedTag, { replicas: 3 });
    const scaled = await admit(
      review('Deployment', 'UPDATE', workload('Deployment', signedTag, { replicas: 2 }), old),
      'mutate',
    );
    expect(scaled).toEqual({ uid: scaled.uid, allowed: true });
  });

  it('a Pod running a signed tag is denied unless it was pinned: the kubelet must pull what was verified', async () => {
    // The mutating endpoint could not pin it (not installed, or the registry hiccupped): the tag
    // points at a signed image now, but could point anywhere when the kubelet pulls.
    const unpinned = await admit(review('Pod', 'CREATE', workload('Pod', signedTag)));
    expect(unpinned.allowed).toBe(false);
    expect(unpinned.status?.message).toBe(
      `spec.containers[0].image ${signedTag}: policy "release" (enforce): the tag is not pinned to a digest, so the image the kubelet pulls may not be the one verified; use a digest (image@sha256:...) or let Signet's mutating webhook pin the tag`,
    );
    expect(lastLogFor(unpinned.uid)).toMatchObject({ decision: 'denied', rule: 'policy' });
    // As the API server does it: mutate pins the tag, validate then verifies the pinned digest.
    const body = review('Pod', 'CREATE', workload('Pod', signedTag));
    const mutated = await admit(body, 'mutate');
    const patch = JSON.parse(Buffer.from(mutated.patch ?? '', 'base64').toString('utf8'));
    expect(patch[1]).toEqual({
      op: 'replace',
      path: '/spec/containers/0/image',
      value: `${signedTag}@${signed.split('@')[1]}`,
    });
    const pinned = await admit(review('Pod', 'CREATE', workload('Pod', patch[1].value)));
    expect(pinned).toMatchObject({ allowed: true });
    expect(pinned.warnings).toBeUndefined();
  });

  it('denies with "verification timed out" when the registry never answers, inside the API server timeout', async () => {
    const started = Date.now();
    const answer = await admit(
      review('Pod', 'CREATE', workload('Pod', `${silentHost}/team/app@sha256:${'a'.repeat(64)}`)),
      'validate',
      '2s',
    );
    expect(answer.allowed).toBe(false);
    expect(answer.status?.message).toMatch(
      /policy "release" \(enforce\): infrastructure failure: verification timed out after 1\.\ds/,
    );
    // Signet's own time from request to answer is inside the API server's 2 s. The test's client,
    // on the same two busy cores, may read the answer a little later (2,028 ms once, in a cold CI
    // run while Go tools were built beside it), and it waits at most 3 s.
    expect(lastLogFor(answer.uid)?.durationMs).toBeLessThan(2000);
    expect(Date.now() - started).toBeLessThan(3000);
    // said once, not again as its own cause
    expect(answer.status?.message?.match(/timed out/g)).toHaveLength(1);
    expect(lastLogFor(answer.uid)).toMatchObject({ decision: 'denied', rule: 'infrastructure' });
  });
});

describe('signet serve as a process', () => {
  it('starts from the CLI with --policy-file, becomes ready and answers a review', async () => {
    const dir = runDir;
    const serving = await issueServingCertificate(ca, ['127.0.0.1'], 1);
    await writeFile(join(dir, 'tls.crt'), serving.cert);
    await writeFile(join(dir, 'tls.key'), serving.key);
    await writeFile(
      join(dir, 'policy.yaml'),
      `apiVersion: policy.sigstore.dev/v1beta1\nkind: ClusterImagePolicy\nmetadata: {name: all}\nspec:\n  images: [{glob: "**"}]\n  authorities: [{static: {action: pass}}]\n`,
    );
    const [port, opsPort] = [await testbed.freePort(), await testbed.freePort()];
    const cli = new URL('../../dist/bin/signet.js', import.meta.url).pathname;
    const proc = await (group as Testbed.ProcessGroup).start({
      name: 'signet',
      command: process.execPath,
      args: [
        cli,
        'serve',
        `--port=${port}`,
        `--ops-port=${opsPort}`,
        '--host=127.0.0.1',
        `--policy-file=${join(dir, 'policy.yaml')}`,
        `--tls-cert-file=${join(dir, 'tls.crt')}`,
        `--tls-key-file=${join(dir, 'tls.key')}`,
        '--shutdown-drain=200ms',
      ],
      env: { PATH: process.env.PATH ?? '' },
      ready: { kind: 'http', url: `http://127.0.0.1:${opsPort}/readyz` },
      readyTimeoutMs: 30_000,
    });
    const answer = await post(
      `https://127.0.0.1:${port}/validate`,
      review('Pod', 'CREATE', workload('Pod', unsigned)),
      ca.cert,
    );
    expect(answer.json().response).toMatchObject({ allowed: true });
    const exit = await proc.stop();
    expect(exit?.code).toBe(0);
    expect(await proc.log()).toContain('"msg":"stopped"');
  });
});
