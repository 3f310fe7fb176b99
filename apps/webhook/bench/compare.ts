// Before/after: two builds of `signet serve` side by side, taking turns, in one session. The shared
// 2-core machine gives a process from one to five times the CPU from minute to minute, so separate
// runs cannot say whether a change helped; rounds that alternate between the two builds can.
//
//   SIGNET_BENCH_BASELINE=/path/to/other/apps/webhook/dist/bin/signet.js node bench/compare.ts
//
// (a built copy of the webhook package of the other commit: its `dist/` and `package.json`, in a
// directory from which it resolves the same node_modules). Each round sends, flat out from 32
// keep-alive HTTPS clients, (a) ReplicaSet scale-down UPDATEs (answered without verification) and
// (b) Pod CREATEs of a cosign-signed image with the verification cache warm, to one build then the
// other (the order alternating by round). It prints the medians over the rounds of reviews/s, p50,
// p99 and server CPU per review, the per-round ratio of CPU per review, and each server's resident
// memory at start and at the end. Fails only when an answer is wrong.
//
//   SIGNET_BENCH_ROUNDS=N   rounds (default 8)
//   SIGNET_BENCH_ROUND=N    reviews per build, case and round (default 8,000)
import { rm } from 'node:fs/promises';
import { Agent } from 'node:https';
import * as testbed from '@signet/testbed';
import { type LoadResult, runLoad } from './load-client.ts';
import {
  allowed,
  describeMemory,
  measure,
  prepareRegistry,
  type Run,
  reviews,
  runSigned,
  type ServerMemory,
  serverMemory,
  startSignet,
} from './signet-server.ts';

const CONCURRENCY = 32;
const WARMUP = 5_000;
const ROUNDS = Number(process.env.SIGNET_BENCH_ROUNDS ?? 8);
const ROUND = Number(process.env.SIGNET_BENCH_ROUND ?? 8_000);
const MAX_MS = 60_000;

type Build = 'before' | 'after';
type Case = 'a' | 'b';
const CASES: Readonly<Record<Case, string>> = {
  a: '(a) ReplicaSet scale-down UPDATE',
  b: '(b) Pod CREATE, cached verification',
};

function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const cpuPerReviewUs = (run: Run) => (run.serverCores / run.result.perSecond) * 1e6;

async function main(baseline: string): Promise<number> {
  const runDir = await testbed.createRunDir('signet-webhook-compare-');
  const group = new testbed.ProcessGroup({ runDir, graceMs: 5_000 });
  try {
    const signed = await prepareRegistry(runDir, group);
    const servers = {
      before: await startSignet(runDir, group, signed, { cli: baseline, name: 'before' }),
      after: await startSignet(runDir, group, signed, { name: 'after' }),
    };
    const agents = {
      before: new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca: servers.before.ca }),
      after: new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca: servers.after.ca }),
    };
    const memory: [string, Build, ServerMemory][] = [];
    for (const build of ['before', 'after'] as const) {
      memory.push(['at start', build, await serverMemory(servers[build].pid, servers[build].ops)]);
    }
    const bodies: Record<Case, Buffer[]> = {
      a: await reviews('replicaset-scale-down.json', 256),
      b: await reviews('pod-create.json', 256, runSigned(signed.image)),
    };
    const options = (build: Build, kind: Case) => ({
      agent: agents[build],
      url: servers[build].url,
      bodies: bodies[kind],
      concurrency: CONCURRENCY,
      accept: allowed,
      maxMs: MAX_MS,
    });
    const checked: LoadResult[] = [];
    for (const build of ['before', 'after'] as const) {
      for (const kind of ['a', 'b'] as const)
        checked.push(await runLoad({ ...options(build, kind), count: WARMUP }));
    }
    const runs: Record<Case, Record<Build, Run[]>> = {
      a: { before: [], after: [] },
      b: { before: [], after: [] },
    };
    for (let round = 0; round < ROUNDS; round++) {
      const order: Build[] = round % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
      for (const kind of ['a', 'b'] as const) {
        for (const build of order) {
          const run = await measure(servers[build], { ...options(build, kind), count: ROUND });
          runs[kind][build].push(run);
          checked.push(run.result);
        }
      }
      const line = (['a', 'b'] as const).map((kind) => {
        const [before, after] = [runs[kind].before.at(-1) as Run, runs[kind].after.at(-1) as Run];
        return `${kind}: ${cpuPerReviewUs(before).toFixed(0)} -> ${cpuPerReviewUs(after).toFixed(0)} µs`;
      });
      console.log(`round ${round + 1}/${ROUNDS}: CPU per review ${line.join(', ')}`);
    }
    for (const build of ['before', 'after'] as const) {
      memory.push(['at the end', build, await serverMemory(servers[build].pid, servers[build].ops)]);
      agents[build].destroy();
    }
    report(runs, memory);
    const failures = checked.filter((r) => r.failed > 0);
    for (const f of failures) console.error(`${f.failed} wrong answers, the first: ${f.firstFailure}`);
    return failures.length === 0 ? 0 : 1;
  } finally {
    await group.stopAll();
    if (process.env.SIGNET_KEEP_RUN_DIR) console.log(`run directory kept: ${runDir}`);
    else await rm(runDir, { recursive: true, force: true });
  }
}

function report(
  runs: Record<Case, Record<Build, Run[]>>,
  memory: readonly [string, Build, ServerMemory][],
): void {
  const lines = [
    `\n${ROUNDS} rounds of ${ROUND.toLocaleString('en-US')} reviews per build and case, flat out, ${CONCURRENCY} keep-alive HTTPS clients, Node ${process.version}; medians over the rounds\n`,
    '| Case | Build | Reviews/s | p50 | p99 | Server CPU per review | after/before CPU per review (per round) |',
    '| --- | --- | --: | --: | --: | --: | --- |',
  ];
  for (const kind of ['a', 'b'] as const) {
    const ratios = runs[kind].after.map(
      (after, i) => cpuPerReviewUs(after) / cpuPerReviewUs(runs[kind].before[i] as Run),
    );
    for (const build of ['before', 'after'] as const) {
      const rs = runs[kind][build];
      const cells = [
        CASES[kind],
        build,
        Math.round(median(rs.map((r) => r.result.perSecond))).toLocaleString('en-US'),
        `${median(rs.map((r) => r.result.p50Ms)).toFixed(2)} ms`,
        `${median(rs.map((r) => r.result.p99Ms)).toFixed(2)} ms`,
        `${median(rs.map(cpuPerReviewUs)).toFixed(0)} µs (${Math.min(...rs.map(cpuPerReviewUs)).toFixed(0)}–${Math.max(...rs.map(cpuPerReviewUs)).toFixed(0)})`,
        build === 'after'
          ? `${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`
          : '',
      ];
      lines.push(`| ${cells.join(' | ')} |`);
    }
  }
  lines.push('');
  for (const [when, build, figures] of memory) lines.push(`${build}, ${when}: ${describeMemory(figures)}`);
  console.log(lines.join('\n'));
}

const baseline = process.env.SIGNET_BENCH_BASELINE;
if (baseline === undefined) {
  console.error("set SIGNET_BENCH_BASELINE to the other build's dist/bin/signet.js");
  process.exitCode = 2;
} else {
  process.exitCode = await main(baseline);
}
