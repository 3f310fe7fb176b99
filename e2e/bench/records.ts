// `pnpm bench` (e2e): verification records at cluster scale (issue 24), on the local control plane
// with 40 kwok nodes. Two Signet replicas serve one 2,000-Pod rollout (100 Deployments x 20
// replicas, 20 distinct cosign-signed digests behind a counting registry proxy), each replica
// answering half of the namespaces (two webhook configurations by namespace label: what a Service
// in front of two replicas does, without sharing a certificate). Arms, in order, with fresh
// replicas each:
//
//   per-replica caches   both replicas without --verification-records (the baseline)
//   records              both with --verification-records
//   restarted            both stopped and started again (empty memory), records on, another rollout
//
// Reported per arm: registry requests (and signature reads, one per verification), reviews, the
// reviews answered from records, the API server's requests on verificationrecords (from its own
// /metrics) and the records written, per minute of rollout. It fails only on a wrong outcome (a
// denied Pod, a rollout that does not finish).
//
// Environment: SIGNET_BENCH_SCALE=F scales the Deployments (default 1: 100 x 20);
// SIGNET_BENCH_CACHE_TTL is every replica's --cache-ttl (default 5m, Signet's): with 5m the
// restarted arm runs while the first records pass the TTL, and shows one verification per digest
// per TTL; with 15m it shows what a restart alone costs.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as testbed from '@signet/testbed';
import type { LocalCluster } from '../src/cluster/index.js';
import type { SignetWebhook } from '../src/signet-webhook.js';
import { procStats } from './proc-stats.ts';

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
const { startRegistryProxy }: typeof import('../src/records/registry-proxy.js') = await import(
  dist('records/registry-proxy.js')
);
const { installVerificationRecordsCrd }: typeof import('../src/records/records-crd.js') = await import(
  dist('records/records-crd.js')
);

const SCALE = Number(process.env.SIGNET_BENCH_SCALE ?? 1);
const DEPLOYMENTS = Math.max(2, Math.round(100 * SCALE));
const REPLICAS = 20;
/** Distinct digests: 20, fewer at a small scale, so that both replicas see every one. */
const DIGESTS = Math.max(1, Math.min(20, Math.floor(DEPLOYMENTS / 2)));
const CHART_NODE_OPTIONS = '--max-old-space-size=256 --max-semi-space-size=8';
const REPLICA_LABEL = 'signet.dev/bench-replica';
const CACHE_TTL = process.env.SIGNET_BENCH_CACHE_TTL ?? '5m';

const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  console.log(line);
};

/** `verb -> count` of the API server's requests on verificationrecords so far. */
async function recordRequests(cluster: LocalCluster): Promise<Map<string, number>> {
  const { stdout } = await cluster.kubectl(['get', '--raw', '/metrics'], { timeoutMs: 60_000 });
  const counts = new Map<string, number>();
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('apiserver_request_total{') || !line.includes('resource="verificationrecords"'))
      continue;
    const verb = /verb="([A-Z]+)"/.exec(line)?.[1] ?? '?';
    counts.set(verb, (counts.get(verb) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return counts;
}

function delta(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [verb, n] of after) {
    const d = n - (before.get(verb) ?? 0);
    if (d > 0) out.set(verb, d);
  }
  return out;
}

async function metric(signet: SignetWebhook, pattern: RegExp): Promise<number> {
  return Number(pattern.exec(await signet.metrics())?.[1] ?? 0);
}

const cluster = await startLocalCluster({
  nodes: 40,
  onProgress: (p) => console.log(`cluster: ${p.message ?? ''}`),
});
try {
  const registry = await testbed.startRegistry({ referrers: false, group: cluster.group });
  const { crane } = await testbed.ensureTools(['crane', 'cosign']);
  const cosign = await testbed.createCosign({ workDir: cluster.runDir });
  const key = await cosign.generateKeyPair(join(cluster.runDir, 'bench-key'), 'bench');
  const proxy = await startRegistryProxy(registry.host);
  const images: string[] = [];
  for (let i = 0; i < DIGESTS; i++) {
    const digest = await testbed.pushRandomImage(registry, `bench/app-${i}`, 'v1', {
      crane,
      workDir: cluster.runDir,
    });
    await cosign.signLegacyKeyed(`${registry.host}/bench/app-${i}@${digest}`, key);
    // By digest, as a pinned template names it: every request is a verification, none a tag lookup.
    images.push(`${proxy.host}/bench/app-${i}@${digest}`);
  }
  await installPolicyCrds(cluster);
  await installVerificationRecordsCrd(cluster);
  await createNamespace(cluster, SIGNET_NAMESPACE);
  await cluster.apply(
    keyPolicy({
      name: 'bench',
      images: [`${proxy.host}/bench/**`],
      publicKeyPem: await readFile(key.publicKey, 'utf8'),
    }),
  );

  /** Two replicas, each registered for the namespaces labelled with its letter. */
  async function replicas(records: boolean): Promise<SignetWebhook[]> {
    const started: SignetWebhook[] = [];
    for (const letter of ['a', 'b']) {
      const signet = await startSignet({
        cluster,
        name: `signet-${letter}`,
        processName: `signet-${letter}-${Date.now()}`,
        insecureRegistries: [proxy.host],
        cacheTtl: CACHE_TTL,
        nodeOptions: CHART_NODE_OPTIONS,
        extraArgs: records ? ['--verification-records'] : [],
      });
      await signet.waitForPolicies(['bench']);
      const configurations = signet.configurations().map((config) => {
        const object = config as { webhooks: { name: string; namespaceSelector?: unknown }[] };
        object.webhooks = object.webhooks.filter((hook) => !hook.name.startsWith('policies.'));
        for (const hook of object.webhooks)
          hook.namespaceSelector = { matchLabels: { [REPLICA_LABEL]: letter } };
        return object;
      });
      await cluster.apply(configurations);
      started.push(signet);
    }
    return started;
  }

  async function rollout(arm: string, signets: readonly SignetWebhook[]) {
    const namespaces = ['a', 'b'].map((letter) => ({ letter, name: `${arm}-${letter}` }));
    for (const { letter, name } of namespaces)
      await cluster.apply({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, labels: { [REPLICA_LABEL]: letter } },
      });
    const stored = await cluster.getJson<{ items: { spec: { verifiedAt: string } }[] }>([
      'verificationrecords',
      '-n',
      SIGNET_NAMESPACE,
    ]);
    const oldest = Math.min(...stored.items.map((r) => Date.parse(r.spec.verifiedAt)));
    const age = Number.isFinite(oldest)
      ? `, records ${((Date.now() - oldest) / 1000).toFixed(0)} s old at the start`
      : '';
    const requestsBefore = proxy.requests.length;
    const apiBefore = await recordRequests(cluster);
    const admissionsBefore = await Promise.all(signets.map(async (s) => (await s.admissions()).length));
    const hitsBefore = await Promise.all(
      signets.map((s) => metric(s, /^signet_verification_record_lookups_total\{result="hit"\} (\d+)/m)),
    );
    const cpuBefore = await Promise.all(
      signets.map(async (s) => (await procStats(s.process.pid)).cpuSeconds),
    );
    const started = Date.now();
    // Both namespaces, in alternating batches of one Deployment per digest: every digest reaches
    // replica a, then (a batch later, a second or two) replica b, then a again, ...
    const objects = Array.from({ length: DEPLOYMENTS }, (_, i) => {
      const namespace = namespaces[Math.floor(i / DIGESTS) % 2]?.name ?? '';
      return {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: `app-${i}`, namespace },
        spec: {
          replicas: REPLICAS,
          selector: { matchLabels: { app: `app-${i}` } },
          template: {
            metadata: { labels: { app: `app-${i}` } },
            spec: { containers: [{ name: 'app', image: images[i % DIGESTS] }] },
          },
        },
      };
    });
    for (let i = 0; i < objects.length; i += DIGESTS) await cluster.apply(objects.slice(i, i + DIGESTS));
    for (;;) {
      let done = 0;
      for (const { name } of namespaces) {
        const list = await cluster.getJson<{ items: { status?: { availableReplicas?: number } }[] }>([
          'deployments',
          '-n',
          name,
        ]);
        done += list.items.filter((d) => d.status?.availableReplicas === REPLICAS).length;
      }
      if (done === objects.length) break;
      if (Date.now() - started > 30 * 60_000)
        throw new Error(`${arm}: ${done}/${objects.length} after 30 min`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const seconds = (Date.now() - started) / 1000;
    // Records are written up to a second after a pass; let the last ones land.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const requests = proxy.requests.slice(requestsBefore);
    const signatureReads = requests.filter((r) => /\/manifests\/sha256-[0-9a-f]{64}\.sig$/.test(r)).length;
    const api = delta(await recordRequests(cluster), apiBefore);
    const reviews = (await Promise.all(signets.map(async (s) => (await s.admissions()).length))).map(
      (n, i) => n - (admissionsBefore[i] ?? 0),
    );
    const denied = (await Promise.all(signets.map((s) => s.admissions())))
      .flat()
      .filter((a) => a.decision === 'denied').length;
    const hits = (
      await Promise.all(
        signets.map((s) => metric(s, /^signet_verification_record_lookups_total\{result="hit"\} (\d+)/m)),
      )
    ).map((n, i) => n - (hitsBefore[i] ?? 0));
    const cpu = (
      await Promise.all(signets.map(async (s) => (await procStats(s.process.pid)).cpuSeconds))
    ).map((n, i) => n - (cpuBefore[i] ?? 0));
    const records = (
      await cluster.getJson<{ items: unknown[] }>(['verificationrecords', '-n', SIGNET_NAMESPACE])
    ).items.length;
    const minutes = seconds / 60;
    const apiTotal = [...api.values()].reduce((a, b) => a + b, 0);
    const writes =
      (api.get('POST') ?? 0) + (api.get('CREATE') ?? 0) + (api.get('PUT') ?? 0) + (api.get('UPDATE') ?? 0);
    say(
      `${arm} (cache TTL ${CACHE_TTL}${age}): ${DEPLOYMENTS} x ${REPLICAS} Pods in ${seconds.toFixed(0)} s; reviews ${reviews.join(' + ')}; ` +
        `registry requests ${requests.length} (signature reads, one per verification: ${signatureReads}, for ${DIGESTS} digests); ` +
        `answered from records ${hits.join(' + ')}; CPU ${cpu.map((c) => c.toFixed(1)).join(' + ')} s; ` +
        `verificationrecords API requests ${apiTotal} (${[...api].map(([v, n]) => `${v} ${n}`).join(', ') || 'none'}; ` +
        `${(apiTotal / minutes).toFixed(1)}/min, writes ${(writes / minutes).toFixed(1)}/min), records ${records}; denied ${denied}`,
    );
    for (const { name } of namespaces) await cluster.kubectl(['delete', 'namespace', name, '--wait=false']);
    return { signatureReads, denied };
  }

  let denied = 0;
  const baseline = await replicas(false);
  denied += (await rollout('per-replica-caches', baseline)).denied;
  for (const s of baseline) await s.stop();
  const recording = await replicas(true);
  const withRecords = await rollout('records', recording);
  denied += withRecords.denied;
  for (const s of recording) await s.stop();
  const restarted = await replicas(true);
  denied += (await rollout('restarted', restarted)).denied;
  for (const s of restarted) await s.stop();
  await proxy.close();
  if (denied > 0) {
    console.error(`FAILED: ${denied} reviews denied`);
    process.exitCode = 1;
  }
} finally {
  await cluster.stop();
}
console.log(`\n${lines.join('\n')}`);
