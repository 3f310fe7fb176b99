// `pnpm bench` (e2e): Signet at cluster scale on the local control plane (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, kwok with 40 fake nodes), against a baseline measured in
// the same run. A measurement, not a test: it fails only on a wrong outcome (a denied controller
// write, a rollout that does not finish), never on speed.
//
//   (1) start-up: `signet serve` with policies from the cluster, from process start to its first
//       admitted scale-down review, and to /readyz, i.e. policies loaded (best of 3 starts). A
//       scale-down needs no policy, so it may be admitted before /readyz turns ready.
//   (2) 100 Deployments x 20 replicas (2,000 Pods, 20 distinct signed digests) created at once:
//       time until all are available, without a webhook and with Signet (median of rounds,
//       interleaved); denied controller writes; registry requests per distinct digest; Signet's CPU
//       seconds and peak RSS
//   (3) Signet's memory in cluster mode: idle, after 100,000 scale-down reviews, and while the
//       cluster holds 10,000 more Pods in 2,000 namespaces (its watches must not cache them)
//
// Environment: SIGNET_BENCH_ROUNDS=N rollout rounds per arm (default 2), SIGNET_BENCH_SCALE=F
// scales Deployments and Pods (default 1: 100 x 20, 10,000 Pods).

import { readFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as testbed from '@signet/testbed';
import type { LocalCluster } from '../src/cluster/index.js';
import type { SignetWebhook } from '../src/signet-webhook.js';
import { median, procStats } from './proc-stats.ts';

// The built suite is what runs (turbo's bench task builds it); the specifiers are variables so
// that typechecking needs no build.
const dist = (path: string) => `../dist/${path}`;
const { startLocalCluster }: typeof import('../src/cluster/index.js') = await import(
  dist('cluster/index.js')
);
const { createNamespace, installPolicyCrds }: typeof import('../src/scenarios/kube.js') = await import(
  dist('scenarios/kube.js')
);
const { keyPolicy }: typeof import('../src/scenarios/policies.js') = await import(
  dist('scenarios/policies.js')
);
const { SIGNET_NAMESPACE, startSignet }: typeof import('../src/signet-webhook.js') = await import(
  dist('signet-webhook.js')
);

const ROUNDS = Number(process.env.SIGNET_BENCH_ROUNDS ?? 2);
const SCALE = Number(process.env.SIGNET_BENCH_SCALE ?? 1);
const DEPLOYMENTS = Math.max(1, Math.round(100 * SCALE));
const REPLICAS = 20;
const DIGESTS = 20;
const EXTRA_PODS = Math.round(10_000 * SCALE);
const EXTRA_NAMESPACES = Math.round(2_000 * SCALE);

/** Signet's Node flags as the chart and the image set them (a smaller young generation). */
const CHART_NODE_OPTIONS = '--max-old-space-size=256 --max-semi-space-size=8';

/** What a run of registry requests asked for: `GET manifests` 20, `GET blobs` 20, ... */
function requestKinds(requests: readonly string[]): string {
  const kinds = new Map<string, number>();
  for (const r of requests) {
    const [method, url = ''] = r.split(' ');
    const kind = `${method} ${/\/manifests\//.test(url) ? 'manifests' : /\/blobs\//.test(url) ? 'blobs' : /\/referrers\//.test(url) ? 'referrers' : /\/tags\/list/.test(url) ? 'tags/list' : url.replace(/\?.*/, '')}`;
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  return [...kinds].map(([k, n]) => `${k} ${n}`).join(', ') || 'none';
}

/** A loopback HTTP proxy in front of the registry that counts what Signet asks it. */
async function countingRegistry(upstream: string) {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const forward = httpRequest(
      `http://${upstream}${req.url}`,
      { method: req.method, headers: { ...req.headers, host: upstream } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => server.close(),
  };
}

function deployments(namespace: string, host: string, round: number): object[] {
  return Array.from({ length: DEPLOYMENTS }, (_, i) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `app-${round}-${i}`, namespace },
    spec: {
      replicas: REPLICAS,
      selector: { matchLabels: { app: `app-${round}-${i}` } },
      strategy: { rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: { app: `app-${round}-${i}` } },
        spec: { containers: [{ name: 'app', image: `${host}/bench/app-${i % DIGESTS}:v1` }] },
      },
    },
  }));
}

/** Seconds from creating the Deployments until every one reports all replicas available. */
async function rollout(
  cluster: LocalCluster,
  namespace: string,
  host: string,
  round: number,
): Promise<number> {
  const started = Date.now();
  const objects = deployments(namespace, host, round);
  for (let i = 0; i < objects.length; i += 25) await cluster.apply(objects.slice(i, i + 25));
  for (;;) {
    const list = await cluster.getJson<{ items: { status?: { availableReplicas?: number } }[] }>([
      'deployments',
      '-n',
      namespace,
    ]);
    const done = list.items.filter((d) => d.status?.availableReplicas === REPLICAS).length;
    if (done === objects.length) return (Date.now() - started) / 1000;
    if (Date.now() - started > 30 * 60_000)
      throw new Error(`rollout in ${namespace}: ${done}/${objects.length} after 30 min`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

async function scaleDownReviews(signet: SignetWebhook, count: number): Promise<number> {
  const body = await readFile(
    new URL('../../packages/k8s-types/test/fixtures/replicaset-scale-down.json', import.meta.url),
  );
  const agent = new Agent({ keepAlive: true, maxSockets: 32, ca: signet.caPem });
  const url = new URL(`${signet.url}/validate?timeout=10s`);
  const one = () =>
    new Promise<boolean>((resolve) => {
      const req = httpsRequest(url, { method: 'POST', agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString().includes('"allowed":true')));
      });
      req.on('error', () => resolve(false));
      req.end(body);
    });
  let failed = 0;
  let sent = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (sent < count) {
        sent++;
        if (!(await one())) failed++;
      }
    }),
  );
  agent.destroy();
  return failed;
}

const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  console.log(line);
};

const cluster = await startLocalCluster({
  nodes: 40,
  onProgress: (p) => console.log(`cluster: ${p.message ?? ''}`),
});
try {
  // Images: 20 distinct digests, each signed with cosign (legacy keyed), behind a counting proxy.
  const registry = await testbed.startRegistry({ referrers: false, group: cluster.group });
  const { crane } = await testbed.ensureTools(['crane', 'cosign']);
  const cosign = await testbed.createCosign({ workDir: cluster.runDir });
  const key = await cosign.generateKeyPair(join(cluster.runDir, 'bench-key'), 'bench');
  for (let i = 0; i < DIGESTS; i++) {
    const digest = await testbed.pushRandomImage(registry, `bench/app-${i}`, 'v1', {
      crane,
      workDir: cluster.runDir,
    });
    await cosign.signLegacyKeyed(`${registry.host}/bench/app-${i}@${digest}`, key);
  }
  const proxy = await countingRegistry(registry.host);
  const publicKeyPem = await readFile(key.publicKey, 'utf8');
  await installPolicyCrds(cluster);
  await createNamespace(cluster, SIGNET_NAMESPACE);
  await cluster.apply(keyPolicy({ name: 'bench', images: [`${proxy.host}/bench/**`], publicKeyPem }));

  // (1) start-up
  const starts: { first: number; ready: number }[] = [];
  const review = await readFile(
    new URL('../../packages/k8s-types/test/fixtures/replicaset-scale-down.json', import.meta.url),
  );
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const signet = await startSignet({
      cluster,
      insecureRegistries: [proxy.host],
      // `listening` is an info line; the admissions it logs are not what is measured here.
      logLevel: 'info',
      waitFor: 'listening',
      nodeOptions: CHART_NODE_OPTIONS,
    });
    let first = Number.NaN;
    for (;;) {
      const answer = await new Promise<string>((resolve) => {
        const req = httpsRequest(
          `${signet.url}/validate`,
          { method: 'POST', ca: signet.caPem, agent: false },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve(Buffer.concat(chunks).toString()));
          },
        );
        req.on('error', () => resolve(''));
        req.end(review);
      });
      if (answer.includes('"allowed":true')) {
        first = performance.now() - t0;
        break;
      }
    }
    let ready = Number.NaN;
    for (;;) {
      if ((await fetch(`${signet.opsUrl}/readyz`)).status === 200) {
        ready = performance.now() - t0;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    starts.push({ first, ready });
    await signet.stop();
  }
  const best = starts.reduce((a, b) => (a.first < b.first ? a : b));
  say(
    `(1) start to first admitted review (policies from the cluster): best of 3 ${best.first.toFixed(0)} ms (all: ${starts.map((s) => s.first.toFixed(0)).join(', ')} ms); to /readyz ${best.ready.toFixed(0)} ms`,
  );

  // (2) rollouts at scale, baseline and Signet interleaved
  const signet = await startSignet({
    cluster,
    insecureRegistries: [proxy.host],
    logLevel: 'info',
    nodeOptions: CHART_NODE_OPTIONS,
  });
  await signet.waitForPolicies(['bench']);
  const idle = await procStats(signet.process.pid);
  say(`(3) cluster mode, idle with policies loaded: RSS ${idle.rssMiB.toFixed(0)} MiB`);
  await cluster.apply(signet.configurations());
  const times = { baseline: [] as number[], signet: [] as number[] };
  let denied = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const arm of ['baseline', 'signet'] as const) {
      const namespace = `${arm}-${round}`;
      await cluster.apply({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: {
          name: namespace,
          labels: arm === 'signet' ? { 'policy.sigstore.dev/include': 'true' } : {},
        },
      });
      const before = await procStats(signet.process.pid);
      const requestsBefore = proxy.requests.length;
      const admissionsBefore = (await signet.admissions()).length;
      const seconds = await rollout(cluster, namespace, proxy.host, round);
      times[arm].push(seconds);
      if (arm === 'signet') {
        const after = await procStats(signet.process.pid);
        const records = (await signet.admissions()).slice(admissionsBefore);
        const controllerDenials = records.filter(
          (r) =>
            r.decision === 'denied' && String(r.user ?? '').startsWith('system:serviceaccount:kube-system:'),
        );
        denied += controllerDenials.length;
        say(
          `(2) round ${round + 1}: Signet ${seconds.toFixed(1)} s, ${records.length} reviews, ${controllerDenials.length} controller writes denied, ${proxy.requests.length - requestsBefore} registry requests for ${DIGESTS} digests (${requestKinds(proxy.requests.slice(requestsBefore))}), ${(after.cpuSeconds - before.cpuSeconds).toFixed(1)} CPU s, peak RSS ${after.peakMiB.toFixed(0)} MiB`,
        );
      } else {
        say(`(2) round ${round + 1}: no webhook ${seconds.toFixed(1)} s`);
      }
      await cluster.kubectl(['delete', 'namespace', namespace, '--wait=false']);
    }
  }
  say(
    `(2) ${DEPLOYMENTS} Deployments x ${REPLICAS}: median ${median(times.signet).toFixed(1)} s with Signet vs ${median(times.baseline).toFixed(1)} s without (ratio ${(median(times.signet) / median(times.baseline)).toFixed(2)}); controller writes denied: ${denied}`,
  );

  // (3) memory after 100,000 cheap reviews, and with 10,000 Pods in 2,000 namespaces
  const failed = await scaleDownReviews(signet, 100_000);
  const afterReviews = await procStats(signet.process.pid);
  say(
    `(3) after 100,000 scale-down reviews (${failed} not allowed): RSS ${afterReviews.rssMiB.toFixed(0)} MiB, peak ${afterReviews.peakMiB.toFixed(0)} MiB`,
  );
  const perNamespace = Math.ceil(EXTRA_PODS / EXTRA_NAMESPACES);
  for (let n = 0; n < EXTRA_NAMESPACES; n += 50) {
    const batch: object[] = [];
    for (let k = n; k < Math.min(n + 50, EXTRA_NAMESPACES); k++) {
      batch.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `crowd-${k}` } });
      for (let p = 0; p < perNamespace; p++) {
        batch.push({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `pod-${p}`, namespace: `crowd-${k}` },
          spec: { containers: [{ name: 'c', image: 'registry.example/crowd:1' }] },
        });
      }
    }
    await cluster.apply(batch);
  }
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  const crowded = await procStats(signet.process.pid);
  say(
    `(3) with ${EXTRA_PODS} more Pods in ${EXTRA_NAMESPACES} namespaces: RSS ${crowded.rssMiB.toFixed(0)} MiB (before: ${afterReviews.rssMiB.toFixed(0)} MiB)`,
  );
  await signet.stop();
  proxy.close();
  if (denied > 0) {
    console.error(`FAILED: ${denied} controller writes were denied`);
    process.exitCode = 1;
  }
} finally {
  await cluster.stop();
}
console.log(`\n${lines.join('\n')}`);
