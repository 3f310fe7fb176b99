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
//
// A before/after comparison of two builds, interleaved in one session, is bench/compare.ts.
import { rm } from 'node:fs/promises';
import { Agent } from 'node:https';
import * as testbed from '@signet/testbed';
import { type LoadOptions, type LoadResult, runLoad } from './load-client.ts';
import {
  allowed,
  describeMemory,
  measure,
  metric,
  prepareRegistry,
  type Run,
  reviews,
  runSigned,
  type Server,
  type ServerMemory,
  serverMemory,
  startSignet,
} from './signet-server.ts';

const CONCURRENCY = 32;
const WARMUP = 5_000;
const MEASURED = Number(process.env.SIGNET_BENCH_MEASURED ?? 50_000);
const PHASE_MAX_MS = 60_000;
/** The target rate: latency is also measured with this load offered, not only flat out. */
const TARGET_RATE = 3_000;
const PACED = 15_000;
/** Idle time before a last memory reading: does the heap shrink once the load stops? */
const IDLE_MS = 10_000;

type PhaseOptions = Omit<LoadOptions, 'count' | 'maxMs'>;

interface Phase {
  readonly warm: LoadResult;
  /** Closed loop: as many reviews per second as the server answers. */
  readonly flatOut: Run;
  /** The target rate offered. */
  readonly paced: Run;
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
