// `pnpm soak`: the long runs of the attack suite against a real `signet serve` process running with
// the Helm chart's Node flags (a 256 MB heap). Short versions of each are in `pnpm test`
// (test/attack/); these report figures instead of asserting speed, and fail only on a wrong answer,
// a crash, or memory beyond the chart's limit.
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
//       p99 must stay under 100 ms and nothing that should pass may be denied
//
// Environment: SIGNET_SOAK_FUZZ=N reviews for (1) (default 100,000), SIGNET_SOAK_SECONDS=N per
// flood phase (default 20).
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as testbed from '@signet/testbed';
import { memoryOf } from '../bench/proc-stats.ts';
import { fuzzedReview, random, wellFormed } from './fuzz.ts';

const built = '../dist/index.js';
const webhook: typeof import('../src/index.js') = await import(built);
const SIGNET = fileURLToPath(new URL('../dist/bin/signet.js', import.meta.url));
const FLOOD_CLIENT = fileURLToPath(new URL('./flood-client.ts', import.meta.url));
const FIXTURES = new URL('../../../packages/k8s-types/test/fixtures/', import.meta.url);
const FUZZ = Number(process.env.SIGNET_SOAK_FUZZ ?? 100_000);
const SECONDS = Number(process.env.SIGNET_SOAK_SECONDS ?? 20);
const CHART_LIMIT_MIB = 384;
const run = promisify(execFile);

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
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: 'production' },
      ready: { kind: 'http', url: `http://127.0.0.1:${opsPort}/readyz` },
    });
    return { port, opsPort, pid: proc.pid, stop: () => proc.stop(10_000) };
  };
  let server = await startServer();
  let { port, opsPort } = server;
  const next = async () => {
    await server.stop();
    server = await startServer();
    ({ port, opsPort } = server);
  };
  const alive = async () => (await fetch(`http://127.0.0.1:${opsPort}/healthz`)).status === 200;
  const rss = async () => (await memoryOf(server.pid)).rssMiB;
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const scaleDown = await import('node:fs/promises').then((fs) =>
    fs.readFile(new URL('replicaset-scale-down.json', FIXTURES)),
  );
  console.log(`soak: signet pid ${server.pid}, RSS ${(await rss()).toFixed(0)} MiB at start`);

  // (1) fuzz
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
  fuzzPeak = Math.max(fuzzPeak, (await memoryOf(server.pid)).peakMiB);
  console.log(
    `(1) fuzz: ${FUZZ} reviews in ${fuzzSeconds.toFixed(1)} s (${(FUZZ / fuzzSeconds).toFixed(0)}/s), ${bad} not well-formed, server alive: ${await alive()}, peak RSS ${fuzzPeak.toFixed(0)} MiB`,
  );
  if (bad > 0 || !(await alive())) failures.push('fuzz');

  // (2) flood
  await next();
  const attack = (mode: string, connections: number, bytes: number, source?: string) =>
    run(
      process.execPath,
      [FLOOD_CLIENT, mode, String(port), file('ca.crt'), String(connections), String(bytes), String(SECONDS)],
      {
        maxBuffer: 1 << 20,
        env: { ...process.env, ...(source === undefined ? {} : { SOURCE_ADDRESS: source }) },
      },
    ).then((out) => JSON.parse(out.stdout) as { statuses: Record<string, number> });
  const baseline: number[] = [];
  for (let i = 0; i < 500; i++) baseline.push((await post(port, ca.cert, agent, scaleDown)).ms);
  const flooding = attack('flood', 50, webhook.DEFAULT_BODY_LIMIT - 1024);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const latencies: number[] = [];
  let floodRss = 0;
  const floodUntil = Date.now() + (SECONDS - 2) * 1000;
  while (Date.now() < floodUntil) {
    const answer = await post(port, ca.cert, agent, scaleDown);
    if (answer.status !== 200 || !answer.body.includes('"allowed":true'))
      failures.push(`flood: scale-down answered ${answer.status}`);
    latencies.push(answer.ms);
    if (latencies.length % 50 === 0) floodRss = Math.max(floodRss, await rss());
  }
  const flood = await flooding;
  console.log(
    `(2) flood: scale-down p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p99 ${quantile(latencies, 0.99).toFixed(1)} ms over ${latencies.length} (idle baseline p50 ${quantile(baseline, 0.5).toFixed(1)} ms, p99 ${quantile(baseline, 0.99).toFixed(1)} ms); flood answers ${JSON.stringify(flood.statuses)}; RSS up to ${floodRss.toFixed(0)} MiB`,
  );

  // (3) stalled bodies
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
      if (answer.status !== 200) failures.push(`stall: scale-down answered ${answer.status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const stalled = await stalling;
    console.log(
      `(3) stalled, ${label} x40: answers ${JSON.stringify(stalled.statuses)}; RSS up to ${stallRss.toFixed(0)} MiB`,
    );
    if (stallRss > CHART_LIMIT_MIB) failures.push(`stall: RSS ${stallRss} MiB`);
  }

  // (4) hostile registry
  await next();
  const digest = `sha256:${'b'.repeat(64)}`;
  const pods = ['oversized', 'drip', 'redirect', 'auth', 'wrong-digest'].map((repo) => ({ repo }));
  const podReview = await import('node:fs/promises').then((fs) =>
    fs.readFile(new URL('pod-create.json', FIXTURES), 'utf8'),
  );
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
          failures.push(`hostile ${repo}: ${answer.status} in ${answer.ms} ms: ${answer.body.slice(0, 200)}`);
        if (round === 0) hostileAnswers.push(`${repo} ${answer.ms.toFixed(0)} ms`);
      }),
    );
  }
  console.log(
    `(4) hostile registry: all denied as infrastructure (${hostileAnswers.join(', ')}); RSS ${(await rss()).toFixed(0)} MiB, peak ${(await memoryOf(server.pid)).peakMiB.toFixed(0)} MiB; alive: ${await alive()}`,
  );
  // (5) mixed attack
  await next();
  const passReview = await import('node:fs/promises').then(async (fs) => {
    const review = JSON.parse(await fs.readFile(new URL('pod-create.json', FIXTURES), 'utf8'));
    review.request.uid = 'should-pass';
    review.request.object.spec.containers = [
      { name: 'app', image: `pass.invalid/app@sha256:${'d'.repeat(64)}` },
    ];
    delete review.request.object.spec.initContainers;
    return JSON.stringify(review);
  });
  const quiet: number[] = [];
  for (let i = 0; i < 300; i++) quiet.push((await post(port, ca.cert, agent, scaleDown)).ms);
  const mixed = {
    validate: attack('validate', 4, 256 * 1024, '127.0.0.2'),
    silent: attack('silent', 300, 0, '127.0.0.3'),
    cel: attack('cel', 2, 0, '127.0.0.4'),
    objects: attack('objects', 2, webhook.DEFAULT_BODY_LIMIT - 64 * 1024, '127.0.0.5'),
  };
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const underAttack: number[] = [];
  let wrong = 0;
  let passes = 0;
  let mixedRss = 0;
  const mixedUntil = Date.now() + (SECONDS - 3) * 1000;
  while (Date.now() < mixedUntil) {
    const answer = await post(port, ca.cert, agent, scaleDown);
    underAttack.push(answer.ms);
    if (answer.status !== 200 || !answer.body.includes('"allowed":true')) {
      wrong++;
      failures.push(`mixed: scale-down answered ${answer.status}: ${answer.body.slice(0, 200)}`);
    }
    if (underAttack.length % 10 === 0) {
      const pod = await post(port, ca.cert, agent, passReview);
      passes++;
      if (pod.status !== 200 || !pod.body.includes('"allowed":true')) {
        wrong++;
        failures.push(
          `mixed: a Pod the static policy admits answered ${pod.status}: ${pod.body.slice(0, 200)}`,
        );
      }
    }
    if (underAttack.length % 50 === 0) mixedRss = Math.max(mixedRss, await rss());
  }
  const seen = Object.fromEntries(
    await Promise.all(Object.entries(mixed).map(async ([name, p]) => [name, (await p).statuses] as const)),
  );
  const p99 = quantile(underAttack, 0.99);
  console.log(
    `(5) mixed attack: scale-down p50 ${quantile(underAttack, 0.5).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms over ${underAttack.length} (quiet p50 ${quantile(quiet, 0.5).toFixed(1)} ms, p99 ${quantile(quiet, 0.99).toFixed(1)} ms); ${passes} Pods a policy admits; wrong answers ${wrong}; attackers saw ${JSON.stringify(seen)}; RSS up to ${mixedRss.toFixed(0)} MiB; alive: ${await alive()}`,
  );
  if (p99 >= 100) failures.push(`mixed: scale-down p99 ${p99.toFixed(1)} ms (target under 100 ms)`);
  if (mixedRss > CHART_LIMIT_MIB) failures.push(`mixed: RSS ${mixedRss} MiB`);

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
