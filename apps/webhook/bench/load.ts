// `pnpm bench`: load on a running `signet serve` (a separate process, so client and server do not
// share an event loop and the memory figure is the server's own) over HTTPS with keep-alive and 32
// concurrent clients, all on loopback. A measurement, not a test: it fails only when an answer is
// wrong, never on speed. Figures go into the README's Benchmark section.
//
//   (a) ReplicaSet scale-down UPDATEs from the deployment controller: admitted without verification
//   (b) Pod CREATEs of a cosign-signed image, policy with a key, verification cache warm
//   (c) the server's resident memory after more than 100,000 reviews
//
// (a) and (b) each run flat out (every client sends its next review as soon as it has an answer:
// the server's capacity, latency mostly queueing) and then with the target rate offered.
//
// Environment, for investigations:
//   SIGNET_BENCH_MEASURED=N          reviews per measured case (default 50,000)
//   SIGNET_BENCH_SERVER_FLAGS='...'  extra Node flags for the server (`--cpu-prof --cpu-prof-dir D`,
//                                    `--max-old-space-size=256` as the Helm chart sets, ...)
//   SIGNET_BENCH_INSPECT=1           also report the live heap after a forced full GC (through the
//                                    inspector; it perturbs the figures a little)
//   SIGNET_KEEP_RUN_DIR=1            keep the run directory (server log, policy, certificates)
import { readFile, rm, writeFile } from 'node:fs/promises';
import { Agent } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as testbed from '@signet/testbed';
import { Inspector } from './inspector.ts';
import { LOOP_RESOLUTION_MS, type LoadOptions, type LoadResult, runLoad } from './load-client.ts';
import { cpuSecondsOf, type MemoryStats, memoryOf } from './proc-stats.ts';

// The built server is what runs; the specifier is a variable so typechecking needs no build.
const built = '../dist/index.js';
const webhook: typeof import('../src/index.js') = await import(built);

const CONCURRENCY = 32;
const WARMUP = 5_000;
const MEASURED = Number(process.env.SIGNET_BENCH_MEASURED ?? 50_000);
const PHASE_MAX_MS = 60_000;
/** The target rate: latency is also measured with this load offered, not only flat out. */
const TARGET_RATE = 3_000;
const PACED = 15_000;
/** Idle time before a last memory reading: does the heap shrink once the load stops? */
const IDLE_MS = 10_000;
const FIXTURES = new URL('../../../packages/k8s-types/test/fixtures/', import.meta.url);
const SIGNET = fileURLToPath(new URL('../dist/bin/signet.js', import.meta.url));

interface SignedImage {
  /** `host:port/team/app@sha256:...` */
  readonly image: string;
  readonly registryHost: string;
  readonly publicKey: string;
}

/** A registry with one image signed by cosign (keyed, legacy `.sig`). */
async function prepareRegistry(runDir: string, group: testbed.ProcessGroup): Promise<SignedImage> {
  const { crane } = await testbed.ensureTools(['crane', 'cosign', 'registry']);
  const registry = await testbed.startRegistry({ referrers: false, group });
  const cosign = await testbed.createCosign({ workDir: runDir });
  const key = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
  const digest = await testbed.pushRandomImage(registry, 'team/app', 'v1', { crane, workDir: runDir });
  const image = `${registry.host}/team/app@${digest}`;
  await cosign.signLegacyKeyed(image, key);
  return { image, registryHost: registry.host, publicKey: await readFile(key.publicKey, 'utf8') };
}

function policyYaml(signed: SignedImage): string {
  const key = signed.publicKey.trim().split('\n').join('\n          ');
  return `apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: release }
spec:
  images: [{ glob: "${signed.registryHost}/team/**" }]
  authorities:
    - name: release-key
      key:
        data: |
          ${key}
`;
}

/** Starts `signet serve` with the policy in a file and a certificate from a fresh CA. */
async function startSignet(runDir: string, group: testbed.ProcessGroup, signed: SignedImage) {
  const ca = await webhook.createCertificateAuthority('signet-bench', 1);
  const serving = await webhook.issueServingCertificate(ca, ['127.0.0.1'], 1);
  const file = (name: string) => join(runDir, name);
  await writeFile(file('tls.crt'), serving.cert);
  await writeFile(file('tls.key'), serving.key);
  await writeFile(file('policy.yaml'), policyYaml(signed));
  const [port, opsPort] = [await testbed.freePort(), await testbed.freePort()];
  // The Node flags the Helm chart and the image run the server with, unless overridden.
  const flags = (process.env.SIGNET_BENCH_SERVER_FLAGS ?? '--max-old-space-size=256 --max-semi-space-size=8')
    .split(' ')
    .filter((f) => f !== '');
  const inspectPort = process.env.SIGNET_BENCH_INSPECT ? await testbed.freePort() : undefined;
  const server = await group.start({
    name: 'signet',
    command: process.execPath,
    args: [
      ...flags,
      ...(inspectPort ? [`--inspect=127.0.0.1:${inspectPort}`] : []),
      SIGNET,
      'serve',
      ...['--policy-file', file('policy.yaml')],
      ...['--tls-cert-file', file('tls.crt'), '--tls-key-file', file('tls.key')],
      ...['--insecure-registry', signed.registryHost],
      ...['--host', '127.0.0.1', '--port', String(port), '--ops-port', String(opsPort)],
      // Nothing balances across replicas here: stop at once, so profiles are written before the kill.
      '--shutdown-drain=0s',
    ],
    // As in the image: NODE_ENV=production, the log (JSON lines at info) goes to a file.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: 'production' },
    ready: { kind: 'http', url: `http://127.0.0.1:${opsPort}/readyz` },
  });
  return {
    pid: server.pid,
    ca: ca.cert,
    url: new URL(`https://127.0.0.1:${port}/validate?timeout=10s`),
    ops: `http://127.0.0.1:${opsPort}`,
    inspector: inspectPort ? await Inspector.connect(inspectPort) : undefined,
  };
}

type Json = Record<string, unknown>;

/** `count` copies of a fixture review with distinct uids, `edit` applied to each request. */
async function reviews(fixture: string, count: number, edit: (request: Json) => void = () => undefined) {
  const text = await readFile(new URL(fixture, FIXTURES), 'utf8');
  return Array.from({ length: count }, (_, i) => {
    const review = JSON.parse(text) as { request: Json };
    review.request.uid = `bench-${fixture}-${i}`;
    edit(review.request);
    return Buffer.from(JSON.stringify(review));
  });
}

/** The fixture's Pod with one container, running the signed image. */
function runSigned(image: string) {
  return (request: Json) => {
    const spec = (request.object as { spec: Json }).spec;
    const [app] = spec.containers as Json[];
    spec.containers = [{ ...app, image }];
    delete spec.initContainers;
  };
}

const allowed = (status: number, body: string) => status === 200 && body.includes('"allowed":true');

type PhaseOptions = Omit<LoadOptions, 'count' | 'maxMs'>;

interface Run {
  readonly result: LoadResult;
  /** Server CPU time over the run, in cores. */
  readonly serverCores: number;
  /** Longest stall of the server's event loop during the run (its own metric, 10 ms timer), ms. */
  readonly serverStallMs: number;
}

interface Server {
  readonly pid: number;
  readonly ops: string;
}

const LOOP_DELAY_MAX = /^signet_nodejs_eventloop_lag_max_seconds /;

interface Phase {
  readonly warm: LoadResult;
  /** Closed loop: as many reviews per second as the server answers. */
  readonly flatOut: Run;
  /** The target rate offered. */
  readonly paced: Run;
}

async function measure(server: Server, options: LoadOptions): Promise<Run> {
  // A scrape resets the server's event-loop delay histogram (prom-client), so the next is this run's.
  await metric(server.ops, LOOP_DELAY_MAX);
  const cpuBefore = await cpuSecondsOf(server.pid);
  const result = await runLoad(options);
  const serverCores = ((await cpuSecondsOf(server.pid)) - cpuBefore) / result.seconds;
  const loopDelayMs = (await metric(server.ops, LOOP_DELAY_MAX)) * 1000;
  return { result, serverCores, serverStallMs: Math.max(0, loopDelayMs - LOOP_RESOLUTION_MS) };
}

/** Warm-up, then flat out, then at the target rate. */
async function phase(server: Server, options: PhaseOptions): Promise<Phase> {
  const warm = await runLoad({ ...options, count: WARMUP, maxMs: PHASE_MAX_MS });
  const flatOut = await measure(server, { ...options, count: MEASURED, maxMs: PHASE_MAX_MS });
  const paced = await measure(server, {
    ...options,
    count: PACED,
    maxMs: PHASE_MAX_MS,
    ratePerSecond: TARGET_RATE,
  });
  return { warm, flatOut, paced };
}

const reviewsOf = (p: Phase) => p.warm.completed + p.flatOut.result.completed + p.paced.result.completed;

/** Sum of the samples of the server's metrics whose line matches. */
async function metric(ops: string, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${ops}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (pattern.test(line)) sum += Number(line.split(' ').at(-1));
  return sum;
}

interface ServerMemory extends MemoryStats {
  /** From the server's own metrics (prom-client's default Node.js gauges), MiB. */
  readonly heapUsedMiB: number;
  readonly heapTotalMiB: number;
  readonly externalMiB: number;
}

async function serverMemory(pid: number, ops: string): Promise<ServerMemory> {
  const gauge = async (name: string) => (await metric(ops, new RegExp(`^signet_${name} `))) / 2 ** 20;
  return {
    ...(await memoryOf(pid)),
    heapUsedMiB: await gauge('nodejs_heap_size_used_bytes'),
    heapTotalMiB: await gauge('nodejs_heap_size_total_bytes'),
    externalMiB: await gauge('nodejs_external_memory_bytes'),
  };
}

function describeMemory(m: ServerMemory): string {
  return (
    `RSS ${m.rssMiB.toFixed(1)} MiB (peak ${m.peakMiB.toFixed(1)}), V8 heap ${m.heapUsedMiB.toFixed(1)} ` +
    `used of ${m.heapTotalMiB.toFixed(1)} MiB, external ${m.externalMiB.toFixed(1)} MiB`
  );
}

function row(name: string, run: Run): string {
  const r = run.result;
  const cells = [
    name,
    r.completed.toLocaleString('en-US'),
    Math.round(r.perSecond).toLocaleString('en-US'),
    `${r.p50Ms.toFixed(2)} ms`,
    `${r.p99Ms.toFixed(2)} ms`,
    `${r.maxMs.toFixed(1)} ms`,
    run.serverCores.toFixed(2),
    `${((run.serverCores / r.perSecond) * 1e6).toFixed(0)} µs`,
    `${run.serverStallMs.toFixed(1)} ms`,
    r.clientCores.toFixed(2),
    `${r.clientStallMs.toFixed(1)} ms`,
    `${r.perSecond >= TARGET_RATE * 0.98 ? 'met' : 'MISSED'} / ${r.p99Ms < 10 ? 'met' : 'MISSED'}`,
  ];
  return `| ${cells.join(' | ')} |`;
}

/** A memory reading, and the live heap after a forced full GC when the inspector is on. */
type MemoryReading = [label: string, figures: ServerMemory, liveHeapMiB: number | undefined];

async function printReport(
  server: Server,
  { a, b, cold }: { readonly a: Phase; readonly b: Phase; readonly cold: LoadResult },
  memory: readonly MemoryReading[],
): Promise<void> {
  const hits = await metric(server.ops, /^signet_verification_cache_total\{result="hit"\}/);
  const scaleDowns = await metric(server.ops, /^signet_admission_requests_total\{.*rule="scale-down"/);
  const rate = `${TARGET_RATE.toLocaleString('en-US')}/s offered`;
  const lines = [
    `\nsignet serve (pid ${server.pid}) on Node ${process.version}, ${CONCURRENCY} keep-alive HTTPS clients`,
    `warm-up ${WARMUP.toLocaleString('en-US')} reviews, then flat out (closed loop), then paced\n`,
    '| Case | Load | Reviews | Reviews/s | p50 | p99 | max | Server cores | Server CPU per review | Server longest stall | Client cores | Client longest stall | ≥ 3,000/s / p99 < 10 ms |',
    '| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --- |',
    row('(a) ReplicaSet scale-down UPDATE | flat out', a.flatOut),
    row(`(a) ReplicaSet scale-down UPDATE | ${rate}`, a.paced),
    row('(b) Pod CREATE, cached verification | flat out', b.flatOut),
    row(`(b) Pod CREATE, cached verification | ${rate}`, b.paced),
    `\nfirst Pod CREATE (cold verification through the server): ${cold.p50Ms.toFixed(2)} ms`,
    `server metrics: ${scaleDowns} scale-down admissions, ${hits} verification cache hits`,
    '(c) server memory (target: RSS under 200 MB = 190.7 MiB after 100,000 reviews)',
    ...memory.map(([label, figures, live]) => {
      const gc = live === undefined ? '' : `; live heap after a forced full GC ${live.toFixed(1)} MiB`;
      return `    ${label}: ${describeMemory(figures)}${gc}`;
    }),
  ];
  console.log(lines.join('\n'));
}

async function main(): Promise<number> {
  const runDir = await testbed.createRunDir('signet-webhook-bench-');
  const group = new testbed.ProcessGroup({ runDir, graceMs: 5_000 });
  try {
    const signed = await prepareRegistry(runDir, group);
    const server = await startSignet(runDir, group, signed);
    const memory: MemoryReading[] = [];
    const readMemory = async (label: string) => {
      const figures = await serverMemory(server.pid, server.ops);
      memory.push([label, figures, await server.inspector?.liveHeapAfterGc()]);
    };
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca: server.ca });
    const common = { agent, url: server.url, concurrency: CONCURRENCY, accept: allowed };
    await readMemory('at start');

    const a = await phase(server, {
      ...common,
      bodies: await reviews('replicaset-scale-down.json', 256),
    });
    await readMemory(`after (a), ${reviewsOf(a).toLocaleString('en-US')} reviews`);

    const pods = await reviews('pod-create.json', 256, runSigned(signed.image));
    const cold = await runLoad({ ...common, bodies: pods, concurrency: 1, count: 1, maxMs: 30_000 });
    const b = await phase(server, { ...common, bodies: pods });
    const total = reviewsOf(a) + cold.completed + reviewsOf(b);
    await readMemory(`after ${total.toLocaleString('en-US')} reviews`);
    agent.destroy();
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    await readMemory(`then ${IDLE_MS / 1000} s idle`);
    server.inspector?.close();

    await printReport(server, { a, b, cold }, memory);

    const runs = [a, b].flatMap((p) => [p.warm, p.flatOut.result, p.paced.result]);
    const failures = [...runs, cold].filter((r) => r.failed > 0);
    for (const f of failures) console.error(`${f.failed} wrong answers, the first: ${f.firstFailure}`);
    return failures.length === 0 ? 0 : 1;
  } finally {
    await group.stopAll();
    if (process.env.SIGNET_KEEP_RUN_DIR) console.log(`run directory kept: ${runDir}`);
    else await rm(runDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
