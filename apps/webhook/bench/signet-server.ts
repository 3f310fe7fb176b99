// The server side of the webhook benchmarks: a registry with a cosign-signed image, `signet serve`
// processes (this build, or another one to compare with) with the policy in a file, the reviews
// they get, and what is read from them (CPU time and memory from /proc, their own metrics).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as testbed from '@signet/testbed';
import { Inspector } from './inspector.ts';
import { LOOP_RESOLUTION_MS, type LoadOptions, type LoadResult, runLoad } from './load-client.ts';
import { cpuSecondsOf, type MemoryStats, memoryOf } from './proc-stats.ts';

// The built server is what runs; the specifier is a variable so typechecking needs no build.
const built = '../dist/index.js';
const webhook: typeof import('../src/index.js') = await import(built);

const FIXTURES = new URL('../../../packages/k8s-types/test/fixtures/', import.meta.url);
/** This build's CLI. */
export const SIGNET = fileURLToPath(new URL('../dist/bin/signet.js', import.meta.url));

export interface SignedImage {
  /** `host:port/team/app@sha256:...` */
  readonly image: string;
  readonly registryHost: string;
  readonly publicKey: string;
}

/** A registry with one image signed by cosign (keyed, legacy `.sig`). */
export async function prepareRegistry(runDir: string, group: testbed.ProcessGroup): Promise<SignedImage> {
  const { crane } = await testbed.ensureTools(['crane', 'cosign', 'registry']);
  const registry = await testbed.startRegistry({ referrers: false, group });
  const cosign = await testbed.createCosign({ workDir: runDir });
  const key = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
  const digest = await testbed.pushRandomImage(registry, 'team/app', 'v1', { crane, workDir: runDir });
  const image = `${registry.host}/team/app@${digest}`;
  await cosign.signLegacyKeyed(image, key);
  return { image, registryHost: registry.host, publicKey: await readFile(key.publicKey, 'utf8') };
}

export function policyYaml(signed: SignedImage): string {
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

export interface SignetProcessOptions {
  /** The CLI to run (default this build's); another build's `dist/bin/signet.js` to compare with. */
  readonly cli?: string;
  /** The process's name, its log's and its files' (default `signet`). */
  readonly name?: string;
}

/** Starts `signet serve` with the policy in a file and a certificate from a fresh CA. */
export async function startSignet(
  runDir: string,
  group: testbed.ProcessGroup,
  signed: SignedImage,
  options: SignetProcessOptions = {},
) {
  const name = options.name ?? 'signet';
  const ca = await webhook.createCertificateAuthority('signet-bench', 1);
  const serving = await webhook.issueServingCertificate(ca, ['127.0.0.1'], 1);
  const file = (base: string) => join(runDir, `${name}-${base}`);
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
    name,
    command: process.execPath,
    args: [
      ...flags,
      ...(inspectPort ? [`--inspect=127.0.0.1:${inspectPort}`] : []),
      options.cli ?? SIGNET,
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

export type Json = Record<string, unknown>;

/** `count` copies of a fixture review with distinct uids, `edit` applied to each request. */
export async function reviews(
  fixture: string,
  count: number,
  edit: (request: Json) => void = () => undefined,
) {
  const text = await readFile(new URL(fixture, FIXTURES), 'utf8');
  return Array.from({ length: count }, (_, i) => {
    const review = JSON.parse(text) as { request: Json };
    review.request.uid = `bench-${fixture}-${i}`;
    edit(review.request);
    return Buffer.from(JSON.stringify(review));
  });
}

/** The fixture's Pod with one container, running the signed image. */
export function runSigned(image: string) {
  return (request: Json) => {
    const spec = (request.object as { spec: Json }).spec;
    const [app] = spec.containers as Json[];
    spec.containers = [{ ...app, image }];
    delete spec.initContainers;
  };
}

export const allowed = (status: number, body: string) => status === 200 && body.includes('"allowed":true');

export interface Run {
  readonly result: LoadResult;
  /** Server CPU time over the run, in cores. */
  readonly serverCores: number;
  /** Longest stall of the server's event loop during the run (its own metric, 10 ms timer), ms. */
  readonly serverStallMs: number;
}

export interface Server {
  readonly pid: number;
  readonly ops: string;
}

const LOOP_DELAY_MAX = /^signet_nodejs_eventloop_lag_max_seconds /;

export async function measure(server: Server, options: LoadOptions): Promise<Run> {
  // A scrape resets the server's event-loop delay histogram (prom-client), so the next is this run's.
  await metric(server.ops, LOOP_DELAY_MAX);
  const cpuBefore = await cpuSecondsOf(server.pid);
  const result = await runLoad(options);
  const serverCores = ((await cpuSecondsOf(server.pid)) - cpuBefore) / result.seconds;
  const loopDelayMs = (await metric(server.ops, LOOP_DELAY_MAX)) * 1000;
  return { result, serverCores, serverStallMs: Math.max(0, loopDelayMs - LOOP_RESOLUTION_MS) };
}

/** Sum of the samples of the server's metrics whose line matches. */
export async function metric(ops: string, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${ops}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (pattern.test(line)) sum += Number(line.split(' ').at(-1));
  return sum;
}

export interface ServerMemory extends MemoryStats {
  /** From the server's own metrics (prom-client's default Node.js gauges), MiB. */
  readonly heapUsedMiB: number;
  readonly heapTotalMiB: number;
  readonly externalMiB: number;
}

export async function serverMemory(pid: number, ops: string): Promise<ServerMemory> {
  const gauge = async (name: string) => (await metric(ops, new RegExp(`^signet_${name} `))) / 2 ** 20;
  return {
    ...(await memoryOf(pid)),
    heapUsedMiB: await gauge('nodejs_heap_size_used_bytes'),
    heapTotalMiB: await gauge('nodejs_heap_size_total_bytes'),
    externalMiB: await gauge('nodejs_external_memory_bytes'),
  };
}

export function describeMemory(m: ServerMemory): string {
  return (
    `RSS ${m.rssMiB.toFixed(1)} MiB (peak ${m.peakMiB.toFixed(1)}), V8 heap ${m.heapUsedMiB.toFixed(1)} ` +
    `used of ${m.heapTotalMiB.toFixed(1)} MiB, external ${m.externalMiB.toFixed(1)} MiB`
  );
}
