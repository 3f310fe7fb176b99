// `pnpm soak`: the long runs of the attack suite against a real `signet serve` process running with
// the Helm chart's Node flags (a 256 MB heap). Short versions of each are in `pnpm test`
// (test/attack/); these report figures instead of asserting speed, and fail only on a wrong answer,
// a crash, memory beyond the chart's limit (`resources.limits.memory` in chart/values.yaml, read at
// start), or, in (5), a scale-down p99 of 100 ms or more.
//
//   (1) 100,000 fuzzed AdmissionReviews (seeded): every answer well-formed, zero crashes; rate, peak RSS
//   (2) flood: 50 connections sending the largest accepted bodies without pause, while one client
//       sends scale-downs; the scale-downs' p50/p99, RSS
//   (3) stalled bodies: 40 connections each send 9 MB of a declared 10 MB body and stop (the
//       original attack), then 40 that stay inside the limit; answers, RSS
//   (4) a hostile registry: oversized manifests, drips, redirect and 401 loops, wrong digests;
//       every Pod is denied as an infrastructure failure inside the API server timeout; RSS
//   (5) a mixed attack from other addresses (127.0.0.2-5), all at once: a /validate-policy flood
//       (distinct CUE and Rego policies, CUE compiles past any deadline, TrustRoots with private
//       mirrors and junk repositories), 300 connections that never send a ClientHello, Pods that
//       make a CEL policy walk 200^3 elements, and 4 MB bodies of empty objects; meanwhile one
//       client sends ReplicaSet scale-downs and Pods a static policy admits: the scale-downs'
//       p99 must stay under 100 ms and nothing that should pass may be denied. Also reported: the
//       CPU each of Signet's threads used during the attack (main thread, workers by name and
//       nice value), and what the attackers used.
//
// The attack clients run at nice 19 by default (SIGNET_SOAK_ATTACKER_NICE). Here they share the
// machine's cores with Signet; in a cluster they are other Pods, on other nodes or with CPU of
// their own, and what they spend is not Signet's to defend. At nice 19 they take only the CPU
// Signet leaves, which models that; at 0 they compete with Signet's main thread as equals, which
// measures this machine rather than Signet. The phase's line says which.
//
// Environment: SIGNET_SOAK_FUZZ=N reviews for (1) (default 100,000), SIGNET_SOAK_SECONDS=N per
// flood phase (default 20), SIGNET_SOAK_PHASES=2,5 to run some phases only (default all),
// SIGNET_SOAK_ATTACKER_NICE=N the attack clients' nice value (default 19; 0 for none),
// SIGNET_SOAK_CPU_PROF=DIR to write a CPU profile of each server (`node --cpu-prof`) into DIR,
// SIGNET_SOAK_MIXED=validate,cel the parts of (5)'s attack to run (default all: validate, silent,
// cel, objects), to tell what each costs.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as testbed from '@signet/testbed';
import { parse } from 'yaml';
import { cpuSecondsOf, memoryOf, type ThreadStats, threadsOf } from '../bench/proc-stats.ts';
import { fuzzedReview, random, wellFormed } from './fuzz.ts';

const built = '../dist/index.js';
const webhook: typeof import('../src/index.js') = await import(built);
const SIGNET = fileURLToPath(new URL('../dist/bin/signet.js', import.meta.url));
const FLOOD_CLIENT = fileURLToPath(new URL('./flood-client.ts', import.meta.url));
const FIXTURES = new URL('../../../packages/k8s-types/test/fixtures/', import.meta.url);
const FUZZ = Number(process.env.SIGNET_SOAK_FUZZ ?? 100_000);
const SECONDS = Number(process.env.SIGNET_SOAK_SECONDS ?? 20);
const PHASES = new Set((process.env.SIGNET_SOAK_PHASES ?? '1,2,3,4,5').split(',').map(Number));
const ATTACKER_NICE = Number(process.env.SIGNET_SOAK_ATTACKER_NICE ?? 19);
const NICE = '/usr/bin/nice';
const CPU_PROFILES = process.env.SIGNET_SOAK_CPU_PROF;
const MIXED = new Set((process.env.SIGNET_SOAK_MIXED ?? 'validate,silent,cel,objects').split(','));
const run = promisify(execFile);

const QUANTITY_UNITS: Readonly<Record<string, number>> = {
  '': 1,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  k: 1e3,
  M: 1e6,
  G: 1e9,
};

/** The chart's memory limit in MiB, read from its values: past it, the kubelet kills the replica. */
async function chartMemoryLimitMiB(): Promise<number> {
  const values = parse(await readFile(new URL('../chart/values.yaml', import.meta.url), 'utf8'));
  const limit = String(values?.resources?.limits?.memory ?? '');
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|k|M|G)?$/.exec(limit);
  if (match === null)
    throw new Error(`chart/values.yaml: resources.limits.memory is ${JSON.stringify(limit)}`);
  return (Number(match[1]) * (QUANTITY_UNITS[match[2] ?? ''] as number)) / 2 ** 20;
}
const CHART_LIMIT_MIB = await chartMemoryLimitMiB();

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly ms: number;
}

function post(
  port: number,
  ca: string,
  agent: Agent,
  body: Buffer | string,
  path = '/validate?timeout=10s',
): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', ca, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          ms: performance.now() - started,
        }),
      );
    });
    req.on('error', (error) => resolve({ status: -1, body: String(error), ms: performance.now() - started }));
    req.end(body);
  });
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/** The hostile registry: every way a registry can waste a client's time or memory. */
function hostileRegistry(): Promise<{ host: string; close: () => void }> {
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '';
    if (url === '/v2/') return res.writeHead(200).end();
    if (url.startsWith('/token'))
      return res
        .writeHead(401, {
          'www-authenticate': `Bearer realm="http://${req.headers.host}/token",service="loop"`,
        })
        .end();
    const repo = url.split('/')[2] ?? '';
    switch (repo) {
      case 'oversized': // announces and sends far more than any manifest may be
        res.writeHead(200, {
          'content-type': 'application/vnd.oci.image.manifest.v1+json',
          'content-length': 200 * 1024 * 1024,
        });
        res.write(Buffer.alloc(8 * 1024 * 1024, 0x20));
        return void setTimeout(() => res.destroy(), 2000);
      case 'drip': // one byte a second
        res.writeHead(200, { 'content-type': 'application/vnd.oci.image.manifest.v1+json' });
        return void (function drip(n: number) {
          if (n > 30 || res.destroyed) return res.destroy();
          res.write('{');
          setTimeout(() => drip(n + 1), 1000);
        })(0);
      case 'redirect':
        return res.writeHead(307, { location: `http://${req.headers.host}${url}?again=${Date.now()}` }).end();
      case 'auth':
        return res
          .writeHead(401, {
            'www-authenticate': `Bearer realm="http://${req.headers.host}/token",service="loop",scope="x"`,
          })
          .end();
      default: // a manifest whose bytes do not match the digest asked for
        res.writeHead(200, { 'content-type': 'application/vnd.oci.image.manifest.v1+json' });
        return res.end(
          JSON.stringify({
            schemaVersion: 2,
            mediaType: 'application/vnd.oci.image.manifest.v1+json',
            layers: [],
          }),
        );
    }
  };
  const server = createServer(handler).listen(0, '127.0.0.1');
  return new Promise((resolve) =>
    server.once('listening', () =>
      resolve({ host: `127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() }),
    ),
  );
}

const runDir = await testbed.createRunDir('signet-soak-');
const group = new testbed.ProcessGroup({ runDir, graceMs: 5000 });
const hostile = await hostileRegistry();
const failures: string[] = [];
try {
  const ca = await webhook.createCertificateAuthority('signet-soak', 1);
  const serving = await webhook.issueServingCertificate(ca, ['127.0.0.1'], 1);
  const file = (name: string) => join(runDir, name);
  await writeFile(file('tls.crt'), serving.cert);
  await writeFile(file('tls.key'), serving.key);
  await writeFile(file('ca.crt'), ca.cert);
  const { publicKey } = await import('node:crypto').then((c) =>
    c.generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  );
  const pem = publicKey
    .export({ format: 'pem', type: 'spki' })
    .toString()
    .trim()
    .split('\n')
    .join('\n          ');
  const heavyCel = ['a', 'b', 'c'].reduceRight(
    (inner, v) => `spec.containers[0].env.all(${v}, ${inner})`,
    'a.name != "" || b.name != "" || c.name != ""',
  );
  await writeFile(
    file('policy.yaml'),
    `apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: hostile }
spec:
  images: [{ glob: "${hostile.host}/**" }]
  authorities:
    - key:
        data: |
          ${pem}
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: pass }
spec:
  images: [{ glob: "pass.invalid/**" }]
  authorities: [{ static: { action: pass } }]
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: cel-heavy }
spec:
  images: [{ glob: "cel.invalid/**" }]
  authorities: [{ static: { action: pass } }]
  policy:
    type: cel
    includeSpec: true
    data: '${heavyCel}'
`,
  );
  /** A fresh `signet serve` per phase, so each RSS figure is that phase's own. */
  const startServer = async () => {
    const [port, opsPort] = [await testbed.freePort(), await testbed.freePort()];
    const proc = await group.start({
      name: `signet-${port}`,
      command: process.execPath,
      args: [
        '--max-old-space-size=256',
        '--max-semi-space-size=8',
        ...(CPU_PROFILES === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${CPU_PROFILES}`]),
        SIGNET,
        'serve',
        ...[
          '--policy-file',
          file('policy.yaml'),
          '--tls-cert-file',
          file('tls.crt'),
          '--tls-key-file',
          file('tls.key'),
        ],
        ...[
          '--insecure-registry',
          hostile.host,
          '--host',
          '127.0.0.1',
          '--port',
          String(port),
          '--ops-port',
          String(opsPort),
        ],
        '--log-level=warn',
        '--shutdown-drain=0s',
      ],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        NODE_ENV: 'production',
        // As the chart's Deployment sets it (its NODE_OPTIONS are the flags above).
        MALLOC_MMAP_THRESHOLD_: '131072',
      },
      ready: { kind: 'http', url: `http://127.0.0.1:${opsPort}/readyz` },
    });
    return { port, opsPort, pid: proc.pid, stop: () => proc.stop(10_000) };
  };
  let server = await startServer();
  let { port, opsPort } = server;
  let used = false;
  /** A fresh server for the next phase, unless the one running has not served one yet. */
  const next = async () => {
    if (used) {
      await server.stop();
      server = await startServer();
      ({ port, opsPort } = server);
    }
    used = true;
  };
  const alive = async () => (await fetch(`http://127.0.0.1:${opsPort}/healthz`)).status === 200;
  const rss = async () => (await memoryOf(server.pid)).rssMiB;
  /** The largest RSS the phase's server reached (sampled, and the kernel's high-water mark). */
  const peakRss = async (sampled: number) => Math.max(sampled, (await memoryOf(server.pid)).peakMiB);
  const withinChart = (phase: string, peak: number) => {
    if (peak > CHART_LIMIT_MIB)
      failures.push(`${phase}: RSS ${peak.toFixed(0)} MiB, over the chart's limit of ${CHART_LIMIT_MIB} MiB`);
  };
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const scaleDown = await readFile(new URL('replicaset-scale-down.json', FIXTURES));
  const allowed = (answer: Answer) => answer.status === 200 && answer.body.includes('"allowed":true');
  const niced = ATTACKER_NICE !== 0 && existsSync(NICE);
  console.log(
    `soak: signet pid ${server.pid}, RSS ${(await rss()).toFixed(0)} MiB at start; the chart's memory limit ${CHART_LIMIT_MIB} MiB; attack clients at nice ${niced ? ATTACKER_NICE : 0}; load average ${loadAverage()}`,
  );
  /** Runs one attack client; its answer counts and CPU seconds when it is done. */
  const attack = (mode: string, connections: number, bytes: number, source?: string) => {
    const client = [
      FLOOD_CLIENT,
      mode,
      String(port),
      file('ca.crt'),
      String(connections),
      String(bytes),
      String(SECONDS),
    ];
    const [command, args] = niced
      ? [NICE, ['-n', String(ATTACKER_NICE), process.execPath, ...client]]
      : [process.execPath, client];
    return run(command, args, {
      maxBuffer: 1 << 20,
      env: { ...process.env, ...(source === undefined ? {} : { SOURCE_ADDRESS: source }) },
    }).then((out) => JSON.parse(out.stdout) as { statuses: Record<string, number>; cpuSeconds: number });
  };

  // (1) fuzz
  if (PHASES.has(1)) {
    await next();
    const rand = random(1);
    let bad = 0;
    let fuzzPeak = 0;
    const fuzzStarted = performance.now();
    for (let done = 0; done < FUZZ; done += 16) {
      const answers = await Promise.all(
        Array.from({ length: 16 }, () => post(port, ca.cert, agent, fuzzedReview(rand))),
      );
      for (const answer of answers) {
        if (wellFormed(answer.status, answer.body)) continue;
        if (bad++ < 3) console.log(`fuzz: not well-formed: ${answer.status} ${answer.body.slice(0, 300)}`);
      }
      if (done % 8000 === 0) fuzzPeak = Math.max(fuzzPeak, await rss());
    }
    const fuzzSeconds = (performance.now() - fuzzStarted) / 1000;
    fuzzPeak = await peakRss(fuzzPeak);
    console.log(
      `(1) fuzz: ${FUZZ} reviews in ${fuzzSeconds.toFixed(1)} s (${(FUZZ / fuzzSeconds).toFixed(0)}/s), ${bad} not well-formed, server alive: ${await alive()}, peak RSS ${fuzzPeak.toFixed(0)} MiB`,
    );
    if (bad > 0 || !(await alive())) failures.push('fuzz');
    withinChart('fuzz', fuzzPeak);
  }

  // (2) flood
  if (PHASES.has(2)) {
    await next();
    const baseline: number[] = [];
    for (let i = 0; i < 500; i++) baseline.push((await post(port, ca.cert, agent, scaleDown)).ms);
    const flooding = attack('flood', 50, webhook.DEFAULT_BODY_LIMIT - 1024);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const latencies: number[] = [];
    let floodRss = 0;
    const floodUntil = Date.now() + (SECONDS - 2) * 1000;
    while (Date.now() < floodUntil) {
      const answer = await post(port, ca.cert, agent, scaleDown);
      if (!allowed(answer))
        failures.push(`flood: scale-down answered ${answer.status}: ${answer.body.slice(0, 200)}`);
      latencies.push(answer.ms);
      if (latencies.length % 50 === 0) floodRss = Math.max(floodRss, await rss());
    }
    const flood = await flooding;
    floodRss = await peakRss(floodRss);
    console.log(
      `(2) flood: scale-down p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p99 ${quantile(latencies, 0.99).toFixed(1)} ms over ${latencies.length} (idle baseline p50 ${quantile(baseline, 0.5).toFixed(1)} ms, p99 ${quantile(baseline, 0.99).toFixed(1)} ms); flood answers ${JSON.stringify(flood.statuses)}; RSS up to ${floodRss.toFixed(0)} MiB`,
    );
    withinChart('flood', floodRss);
  }

  // (3) stalled bodies
  if (PHASES.has(3)) {
    for (const [label, bytes] of [
      ['9 MB of 10 MB declared', 9 * 1024 * 1024],
      ['3.5 MB of 3.85 MB declared', 3_500_000],
    ] as const) {
      await next();
      const stalling = attack('stall', 40, bytes);
      let stallRss = 0;
      const stallUntil = Date.now() + (SECONDS - 1) * 1000;
      while (Date.now() < stallUntil) {
        stallRss = Math.max(stallRss, await rss());
        const answer = await post(port, ca.cert, agent, scaleDown);
        if (!allowed(answer))
          failures.push(`stall: scale-down answered ${answer.status}: ${answer.body.slice(0, 200)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const stalled = await stalling;
      stallRss = await peakRss(stallRss);
      console.log(
        `(3) stalled, ${label} x40: answers ${JSON.stringify(stalled.statuses)}; RSS up to ${stallRss.toFixed(0)} MiB`,
      );
      withinChart('stall', stallRss);
    }
  }

  // (4) hostile registry
  if (PHASES.has(4)) {
    await next();
    const digest = `sha256:${'b'.repeat(64)}`;
    const pods = ['oversized', 'drip', 'redirect', 'auth', 'wrong-digest'].map((repo) => ({ repo }));
    const podReview = await readFile(new URL('pod-create.json', FIXTURES), 'utf8');
    const hostileAnswers: string[] = [];
    for (let round = 0; round < 4; round++) {
      await Promise.all(
        pods.map(async ({ repo }) => {
          const review = JSON.parse(podReview);
          review.request.uid = `hostile-${repo}-${round}`;
          review.request.object.spec.containers = [
            { name: 'a', image: `${hostile.host}/${repo}/app@${digest}` },
          ];
          delete review.request.object.spec.initContainers;
          const answer = await post(port, ca.cert, agent, JSON.stringify(review));
          const response = JSON.parse(answer.body).response ?? {};
          const denied =
            answer.status === 200 &&
            response.allowed === false &&
            /infrastructure failure/.test(response.status?.message ?? '');
          if (!denied || answer.ms > 10_000)
            failures.push(
              `hostile ${repo}: ${answer.status} in ${answer.ms} ms: ${answer.body.slice(0, 200)}`,
            );
          if (round === 0) hostileAnswers.push(`${repo} ${answer.ms.toFixed(0)} ms`);
        }),
      );
    }
    const hostilePeak = await peakRss(0);
    console.log(
      `(4) hostile registry: all denied as infrastructure (${hostileAnswers.join(', ')}); RSS ${(await rss()).toFixed(0)} MiB, peak ${hostilePeak.toFixed(0)} MiB; alive: ${await alive()}`,
    );
    withinChart('hostile registry', hostilePeak);
  }

  // (5) mixed attack
  if (PHASES.has(5)) {
    await next();
    const passReview = await (async () => {
      const review = JSON.parse(await readFile(new URL('pod-create.json', FIXTURES), 'utf8'));
      review.request.uid = 'should-pass';
      review.request.object.spec.containers = [
        { name: 'app', image: `pass.invalid/app@sha256:${'d'.repeat(64)}` },
      ];
      delete review.request.object.spec.initContainers;
      return JSON.stringify(review);
    })();
    const quiet: number[] = [];
    for (let i = 0; i < 300; i++) quiet.push((await post(port, ca.cert, agent, scaleDown)).ms);
    const attacks = {
      validate: () => attack('validate', 4, 256 * 1024, '127.0.0.2'),
      silent: () => attack('silent', 300, 0, '127.0.0.3'),
      cel: () => attack('cel', 2, 0, '127.0.0.4'),
      objects: () => attack('objects', 2, webhook.DEFAULT_BODY_LIMIT - 64 * 1024, '127.0.0.5'),
    };
    const mixed = Object.fromEntries(
      Object.entries(attacks)
        .filter(([name]) => MIXED.has(name))
        .map(([name, start]) => [name, start()]),
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const underAttack: number[] = [];
    let wrong = 0;
    let passes = 0;
    let mixedRss = 0;
    const cpuBefore = await cpuOf(server.pid);
    const mixedStarted = performance.now();
    const mixedUntil = Date.now() + (SECONDS - 3) * 1000;
    while (Date.now() < mixedUntil) {
      const answer = await post(port, ca.cert, agent, scaleDown);
      underAttack.push(answer.ms);
      if (!allowed(answer)) {
        wrong++;
        failures.push(`mixed: scale-down answered ${answer.status}: ${answer.body.slice(0, 200)}`);
      }
      if (underAttack.length % 10 === 0) {
        const pod = await post(port, ca.cert, agent, passReview);
        passes++;
        if (!allowed(pod)) {
          wrong++;
          failures.push(
            `mixed: a Pod the static policy admits answered ${pod.status}: ${pod.body.slice(0, 200)}`,
          );
        }
      }
      if (underAttack.length % 50 === 0) mixedRss = Math.max(mixedRss, await rss());
    }
    const cpu = cpuSpent(cpuBefore, await cpuOf(server.pid), (performance.now() - mixedStarted) / 1000);
    const seen = Object.fromEntries(
      await Promise.all(Object.entries(mixed).map(async ([name, p]) => [name, await p] as const)),
    );
    const attackerCpu = Object.values(seen).reduce((sum, client) => sum + client.cpuSeconds, 0);
    mixedRss = await peakRss(mixedRss);
    const p99 = quantile(underAttack, 0.99);
    console.log(
      `(5) mixed attack (attack clients at nice ${niced ? ATTACKER_NICE : 0}): scale-down p50 ${quantile(underAttack, 0.5).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms over ${underAttack.length} (quiet p50 ${quantile(quiet, 0.5).toFixed(1)} ms, p99 ${quantile(quiet, 0.99).toFixed(1)} ms); ${passes} Pods a policy admits; wrong answers ${wrong}; attackers saw ${JSON.stringify(Object.fromEntries(Object.entries(seen).map(([name, client]) => [name, client.statuses])))} and used ${attackerCpu.toFixed(1)} CPU s; RSS up to ${mixedRss.toFixed(0)} MiB; alive: ${await alive()}; load average ${loadAverage()}`,
    );
    console.log(`    Signet's CPU during the attack: ${cpu}`);
    // The quiet p99 and the load average tell what the machine added (other work on its cores).
    if (p99 >= 100)
      failures.push(
        `mixed: scale-down p99 ${p99.toFixed(1)} ms (target under 100 ms; quiet p99 ${quantile(quiet, 0.99).toFixed(1)} ms, load average ${loadAverage()})`,
      );
    withinChart('mixed', mixedRss);
  }

  agent.destroy();
  if (!(await alive())) failures.push('the server died');
} finally {
  hostile.close();
  await group.stopAll();
}
if (failures.length > 0) {
  console.error(`soak failures:\n  ${[...new Set(failures)].join('\n  ')}`);
  process.exit(1);
}
console.log('soak: passed');

function loadAverage(): string {
  return loadavg()
    .map((load) => load.toFixed(2))
    .join(' ');
}

interface CpuSample {
  readonly pid: number;
  /** The whole process, threads that ended included. */
  readonly total: number;
  readonly threads: readonly ThreadStats[];
}

async function cpuOf(pid: number): Promise<CpuSample> {
  return { pid, total: await cpuSecondsOf(pid), threads: await threadsOf(pid) };
}

/**
 * What the process's threads used between two samples, in CPU seconds and in cores over `seconds`:
 * the main thread (its id is the process's), the workers by name and nice value, and what threads
 * that ended meanwhile used (terminated workers: the process's total less the live threads').
 */
function cpuSpent(before: CpuSample, after: CpuSample, seconds: number): string {
  const earlier = new Map(before.threads.map((thread) => [thread.tid, thread.cpuSeconds]));
  const groups = new Map<string, { seconds: number; threads: number }>();
  let live = 0;
  let main = 0;
  for (const thread of after.threads) {
    const used = thread.cpuSeconds - (earlier.get(thread.tid) ?? 0);
    live += used;
    if (thread.tid === after.pid) {
      main = used;
      continue;
    }
    const key = `${thread.name} (nice ${thread.nice})`;
    const group = groups.get(key) ?? { seconds: 0, threads: 0 };
    group.seconds += used;
    group.threads += 1;
    groups.set(key, group);
  }
  const share = (used: number) => `${used.toFixed(1)} s (${((used / seconds) * 100).toFixed(0)}%)`;
  const parts = [...groups]
    .filter(([, group]) => group.seconds >= 0.05)
    .sort(([, a], [, b]) => b.seconds - a.seconds)
    .map(([key, group]) => `${key} x${group.threads} ${share(group.seconds)}`);
  const ended = after.total - before.total - live;
  return [
    `total ${share(after.total - before.total)} over ${seconds.toFixed(1)} s`,
    `main thread ${share(main)}`,
    ...parts,
    ...(ended >= 0.05 ? [`threads that ended ${share(ended)}`] : []),
  ].join('; ');
}
