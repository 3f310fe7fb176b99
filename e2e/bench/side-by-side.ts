// `pnpm bench` (e2e): Signet side by side with sigstore policy-controller v0.15.1 on one local
// control plane: the same AdmissionReviews (a ReplicaSet scale-down; a Pod CREATE of a
// cosign-signed image, cache warm), 32 keep-alive HTTPS clients, rounds interleaved; reviews/s,
// p50/p99 and CPU per review (from /proc), then medians of the rounds and Signet's ratios to
// policy-controller. Per process also: the time from its start (its age in /proc) to its first
// admitted review, the first Pod verification after start (before any other load: cold code, cold
// connections), RSS idle and after 100,000 scale-down reviews. A measurement, not a test: it fails
// only on a wrong outcome (a review not allowed, an error), never on speed.
//
// policy-controller's webhook is built by the testbed (tool `policy-controller`: its go.mod replaces
// two go-containerregistry pseudo-versions v0.15.1 pins but the module proxy does not serve; a cold
// build takes about 4 minutes, then it is cached). POLICY_CONTROLLER_BIN=<binary> uses another one.
// It runs as a host process with its own config/ applied (without its Deployment and policy
// webhooks) and listens on 8443, as its --secure-port flag is read too late to change it.
//
// Environment: SIGNET_BENCH_ROUNDS=N measured rounds per arm and case (default 3).
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import * as testbed from '@signet/testbed';
import { parseAllDocuments } from 'yaml';
import { ageSeconds, median, procStats } from './proc-stats.ts';

// The built suite is what runs; the specifiers are variables so that typechecking needs no build.
const dist = (path: string) => `../dist/${path}`;
const { startLocalCluster }: typeof import('../src/cluster/index.js') = await import(
  dist('cluster/index.js')
);
const { createNamespace, installPolicyCrds }: typeof import('../src/scenarios/kube.js') = await import(
  dist('scenarios/kube.js')
);
const { SIGNET_NAMESPACE, startSignet }: typeof import('../src/signet-webhook.js') = await import(
  dist('signet-webhook.js')
);

const PC =
  process.env.POLICY_CONTROLLER_BIN ||
  (
    await testbed.ensureTools(['policy-controller'], {
      onProgress: (event) => console.log(`build-tools: ${event.message}`),
    })
  )['policy-controller'];
const CONFIG = join(await testbed.policyControllerModule(), 'config');
const ROUNDS = Math.max(1, Number(process.env.SIGNET_BENCH_ROUNDS ?? 3));
const WARMUP = 5000;
const MEASURED = 30000;
/** Scale-down reviews each process has answered when its RSS "after 100,000 reviews" is read. */
const RSS_AFTER = 100_000;
/** Signet's CPU per cheap review at most this share of policy-controller's (issue 22). */
const CHEAP_CPU_TARGET = 0.5;

const review = await readFile(
  new URL('../../packages/k8s-types/test/fixtures/replicaset-scale-down.json', import.meta.url),
);

const cpuSeconds = async (pid: number) => (await procStats(pid)).cpuSeconds;
const rssMiB = async (pid: number) => (await procStats(pid)).rssMiB;

async function load(url: string, ca: string, servername: string, count: number, body: Buffer = review) {
  // policy-controller's serving certificate is re-issued by its own controller: its CA is not checked (32 connections, verified once each).
  const agent = new Agent({
    keepAlive: true,
    maxSockets: 32,
    ...(ca ? { ca } : {}),
    ...(servername ? { servername, rejectUnauthorized: false } : {}),
  });
  const lat: number[] = [];
  const statuses = new Map<string, number>();
  let sent = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      const t = performance.now();
      const req = request(
        url,
        { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            lat.push(performance.now() - t);
            const body = Buffer.concat(chunks).toString();
            const key = `${res.statusCode} allowed=${/"allowed":\s*true/.test(body)}`;
            statuses.set(key, (statuses.get(key) ?? 0) + 1);
            resolve();
          });
        },
      );
      req.on('error', (e) => {
        statuses.set(`error ${e.message}`, (statuses.get(`error ${e.message}`) ?? 0) + 1);
        resolve();
      });
      req.end(body);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (sent < count) {
        sent++;
        await one();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  lat.sort((a, b) => a - b);
  return {
    rate: count / seconds,
    p50: lat[Math.floor(lat.length / 2)] ?? Number.NaN,
    p99: lat[Math.floor(lat.length * 0.99)] ?? Number.NaN,
    statuses: Object.fromEntries(statuses),
  };
}

/**
 * Seconds from `pid`'s start (its age in /proc: what the process itself took, not how long the
 * bench took to spawn it) to its first admitted scale-down review, polling every 20 ms.
 */
async function firstAdmitted(pid: number, url: string, ca: string, servername: string): Promise<number> {
  for (let i = 0; i < 3000; i++) {
    const r = await load(url, ca, servername, 1);
    if (r.statuses['200 allowed=true'] === 1) return ageSeconds(pid);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${url}: no admitted review within 60 s`);
}

const cluster = await startLocalCluster({ onProgress: () => {} });
try {
  await installPolicyCrds(cluster);
  // policy-controller's config/, without its Deployment (it runs here as a host process) and its
  // policy webhooks (the API server could not reach them).
  for (const file of (await readdir(CONFIG)).filter((f) => f.endsWith('.yaml')).sort()) {
    if (
      [
        'kustomization.yaml',
        'webhook.yaml',
        '501-policy-webhook-configurations.yaml',
        '300-clusterimagepolicy.yaml',
        '300-trustroot.yaml',
      ].includes(file)
    )
      continue;
    for (const doc of parseAllDocuments(await readFile(join(CONFIG, file), 'utf8'))) {
      const o = doc.toJS();
      if (o) await cluster.apply(o);
    }
  }
  const home = join(cluster.runDir, 'pc-home');
  await mkdir(home, { recursive: true });
  const pcPort = 8443; // its --secure-port flag is parsed after the options are captured
  const pc = await cluster.group.start({
    name: 'policy-controller',
    command: PC,
    args: ['--disable-tuf', `--secure-port=${pcPort}`],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      SYSTEM_NAMESPACE: 'cosign-system',
      CONFIG_LOGGING_NAME: 'config-logging',
      METRICS_DOMAIN: 'sigstore.dev/policy',
      WEBHOOK_NAME: 'webhook',
      KUBERNETES_MIN_VERSION: '1.21.0',
      POD_NAME: 'policy-controller-0',
      KUBECONFIG: cluster.kubeconfig,
    },
    ready: { kind: 'log', pattern: /./ },
    readyTimeoutMs: 60_000,
  });
  const pcUrl = `https://127.0.0.1:${pcPort}/validations`;
  // Its certificate controller writes its serving certificate first; the probe does not need the
  // CA (see load). Every 20 ms until a scale-down is admitted: its start to first admitted review.
  const pcFirst = await firstAdmitted(pc.pid, pcUrl, '', 'webhook.cosign-system.svc');
  let ca = '';
  for (let i = 0; i < 600 && ca === ''; i++) {
    const secret = await cluster
      .getJson<{ data?: Record<string, string> }>(['secret', '-n', 'cosign-system', 'webhook-certs'])
      .catch(() => ({}));
    const data = (secret as { data?: Record<string, string> }).data ?? {};
    if (data['ca-cert.pem']) ca = Buffer.from(data['ca-cert.pem'], 'base64').toString();
    else await new Promise((r) => setTimeout(r, 100));
  }
  console.log(
    `policy-controller: first admitted review ${(pcFirst * 1000).toFixed(0)} ms after its start, RSS ${(await rssMiB(pc.pid)).toFixed(0)} MiB`,
  );
  await createNamespace(cluster, SIGNET_NAMESPACE);
  await createNamespace(cluster, 'test');
  // A cosign-signed image (legacy keyed) and one ClusterImagePolicy both webhooks read.
  const registry = await testbed.startRegistry({ referrers: false, group: cluster.group });
  const { crane } = await testbed.ensureTools(['crane', 'cosign']);
  const cosign = await testbed.createCosign({ workDir: cluster.runDir });
  const key = await cosign.generateKeyPair(join(cluster.runDir, 'side-key'), 'side');
  const digest = await testbed.pushRandomImage(registry, 'team/app', 'v1', {
    crane,
    workDir: cluster.runDir,
  });
  const image = `${registry.host}/team/app@${digest}`;
  await cosign.signLegacyKeyed(image, key);
  const publicKeyPem = await readFile(key.publicKey, 'utf8');
  await cluster.apply({
    apiVersion: 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata: { name: 'side' },
    spec: { images: [{ glob: `${registry.host}/team/**` }], authorities: [{ key: { data: publicKeyPem } }] },
  });
  const podReview: { request: { object: { spec: { containers: object[]; initContainers?: unknown } } } } =
    JSON.parse(
      await readFile(
        new URL('../../packages/k8s-types/test/fixtures/pod-create.json', import.meta.url),
        'utf8',
      ),
    );
  podReview.request.object.spec.containers = [{ ...podReview.request.object.spec.containers[0], image }];
  delete podReview.request.object.spec.initContainers;
  const podBody = Buffer.from(JSON.stringify(podReview));
  await new Promise((r) => setTimeout(r, 5000)); // policy-controller picks the policy up
  const signet = await startSignet({
    cluster,
    insecureRegistries: [registry.host],
    logLevel: 'info',
    nodeOptions: '--max-old-space-size=256 --max-semi-space-size=8',
    waitFor: 'listening',
  });
  const signetFirst = await firstAdmitted(signet.process.pid, `${signet.url}/validate`, signet.caPem, '');
  await signet.waitForPolicies(['side']);
  console.log(`Signet: first admitted review ${(signetFirst * 1000).toFixed(0)} ms after its start`);
  // A new replica gets its first review once its Pod is Ready and the Service lists it, a readiness
  // probe after it is ready (the chart's probes every 5 s); start-up.ts waits as long.
  await new Promise((r) => setTimeout(r, 2000));
  const idle = `idle RSS: policy-controller ${(await rssMiB(pc.pid)).toFixed(0)} MiB, Signet ${(await rssMiB(signet.process.pid)).toFixed(0)} MiB`;
  console.log(idle);
  const arms = [
    {
      name: 'policy-controller' as const,
      pid: pc.pid,
      url: pcUrl,
      ca,
      servername: 'webhook.cosign-system.svc',
    },
    {
      name: 'signet' as const,
      pid: signet.process.pid,
      url: `${signet.url}/validate`,
      ca: signet.caPem,
      servername: '',
    },
  ];
  type Arm = (typeof arms)[number]['name'];
  type Case = 'scale-down' | 'pod-create';
  type Round = { rate: number; cpuUs: number; p50: number; p99: number };
  const results: Record<Case, Record<Arm, Round[]>> = {
    'scale-down': { 'policy-controller': [], signet: [] },
    'pod-create': { 'policy-controller': [], signet: [] },
  };
  const wrong: string[] = [];
  /** A round of `count` reviews against one arm: rate, latency, CPU per review; anything but an allowed 200 is wrong. */
  const round = async (arm: (typeof arms)[number], kind: Case, body: Buffer, count: number) => {
    const before = await cpuSeconds(arm.pid);
    const r = await load(arm.url, arm.ca, arm.servername, count, body);
    const cpuUs = (((await cpuSeconds(arm.pid)) - before) / count) * 1e6;
    const bad = Object.entries(r.statuses).filter(([key]) => key !== '200 allowed=true');
    if (bad.length > 0) wrong.push(`${arm.name} ${kind}: ${JSON.stringify(r.statuses)}`);
    results[kind][arm.name].push({ rate: r.rate, cpuUs, p50: r.p50, p99: r.p99 });
    console.log(
      `${kind} ${arm.name}: ${r.rate.toFixed(0)}/s, ${cpuUs.toFixed(0)} µs CPU/review, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${JSON.stringify(r.statuses)}, RSS ${(await rssMiB(arm.pid)).toFixed(0)} MiB`,
    );
  };
  // The first Pod verification after start: neither process has verified anything yet, nor
  // answered more than its probes (cold code paths, no registry connection).
  const first: Record<string, number> = {};
  for (const arm of arms) {
    const r = await load(arm.url, arm.ca, arm.servername, 1, podBody);
    first[arm.name] = r.p50;
    if (!r.statuses['200 allowed=true'])
      wrong.push(`${arm.name} first Pod CREATE: ${JSON.stringify(r.statuses)}`);
    console.log(
      `${arm.name} first Pod CREATE after start: ${r.p50.toFixed(1)} ms ${JSON.stringify(r.statuses)}`,
    );
  }
  for (const arm of arms) await load(arm.url, arm.ca, arm.servername, WARMUP);
  for (let n = 0; n < ROUNDS; n++) for (const arm of arms) await round(arm, 'scale-down', review, MEASURED);
  // RSS once each process has answered RSS_AFTER scale-down reviews (topped up to that count).
  const rssAfter: Record<string, number> = {};
  for (const arm of arms) {
    const more = RSS_AFTER - WARMUP - ROUNDS * MEASURED;
    if (more > 0) await load(arm.url, arm.ca, arm.servername, more);
    rssAfter[arm.name] = await rssMiB(arm.pid);
  }
  for (const arm of arms) await load(arm.url, arm.ca, arm.servername, 2000, podBody);
  // policy-controller answers a cached Pod CREATE about 40 times a second: fewer reviews for it.
  for (let n = 0; n < ROUNDS; n++)
    for (const arm of arms) await round(arm, 'pod-create', podBody, arm.name === 'signet' ? MEASURED : 3000);

  const summary = (kind: Case, target: number) => {
    const of = (arm: Arm, key: 'rate' | 'cpuUs' | 'p50' | 'p99') =>
      median(results[kind][arm].map((r) => r[key]));
    // Rounds are interleaved, so each round's ratio compares the two under the same conditions.
    const ratios = results[kind].signet.map(
      (r, i) => r.rate / (results[kind]['policy-controller'][i]?.rate ?? Number.NaN),
    );
    const ratio = median(ratios);
    return [
      `${kind}: policy-controller ${of('policy-controller', 'rate').toFixed(0)}/s (${of('policy-controller', 'cpuUs').toFixed(0)} µs CPU/review, p50 ${of('policy-controller', 'p50').toFixed(2)} ms, p99 ${of('policy-controller', 'p99').toFixed(2)} ms), ` +
        `Signet ${of('signet', 'rate').toFixed(0)}/s (${of('signet', 'cpuUs').toFixed(0)} µs CPU/review, p50 ${of('signet', 'p50').toFixed(2)} ms, p99 ${of('signet', 'p99').toFixed(2)} ms)`,
      `${kind}: Signet/policy-controller throughput ${ratio.toFixed(1)}x (median of the rounds' ${ratios.map((r) => r.toFixed(1)).join(', ')}; target >= ${target}x: ${ratio >= target ? 'met' : 'NOT met'})`,
    ];
  };
  const cheap = results['scale-down'];
  const cheapCpuUs = median(cheap.signet.map((r) => r.cpuUs));
  const cpuRatios = cheap.signet.map(
    (r, i) => r.cpuUs / (cheap['policy-controller'][i]?.cpuUs ?? Number.NaN),
  );
  const cpuRatio = median(cpuRatios);
  const firstRatio = (first.signet ?? Number.NaN) / (first['policy-controller'] ?? Number.NaN);
  const lines = [
    `medians of ${ROUNDS} rounds, 32 clients`,
    ...summary('scale-down', 2),
    `scale-down: Signet CPU per review ${cheapCpuUs.toFixed(0)} µs, ${cpuRatio.toFixed(2)}x policy-controller's (rounds: ${cpuRatios.map((r) => r.toFixed(2)).join(', ')}; target <= ${CHEAP_CPU_TARGET}x: ${cpuRatio <= CHEAP_CPU_TARGET ? 'met' : 'NOT met'})`,
    ...summary('pod-create', 20),
    `start to first admitted review: policy-controller ${(pcFirst * 1000).toFixed(0)} ms, Signet ${(signetFirst * 1000).toFixed(0)} ms (Signet's start in cluster mode in detail: start-up.ts)`,
    `first Pod verification after start: policy-controller ${first['policy-controller']?.toFixed(1)} ms, Signet ${first.signet?.toFixed(1)} ms (${firstRatio.toFixed(1)}x; target <= 5x: ${firstRatio <= 5 ? 'met' : 'NOT met'})`,
    idle,
    `RSS after ${RSS_AFTER.toLocaleString('en')} scale-down reviews: policy-controller ${rssAfter['policy-controller']?.toFixed(0)} MiB, Signet ${rssAfter.signet?.toFixed(0)} MiB (target <= 256 MiB: ${(rssAfter.signet ?? Number.NaN) <= 256 ? 'met' : 'NOT met'})`,
    `RSS at the end: policy-controller ${(await rssMiB(pc.pid)).toFixed(0)} MiB, Signet ${(await rssMiB(signet.process.pid)).toFixed(0)} MiB`,
  ];
  console.log(`\n${lines.join('\n')}`);
  if (wrong.length > 0) {
    console.error(`FAILED: reviews not allowed:\n${wrong.join('\n')}`);
    process.exitCode = 1;
  }
  await signet.stop();
} finally {
  await cluster.stop();
}
