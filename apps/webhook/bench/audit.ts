// `pnpm bench` (after load.ts): `signet audit` of 5,000 running Pods over 200 distinct digests, all
// signed with cosign in a local registry, as a separate process (`signet audit -f`): wall time,
// registry requests (through a counting proxy: the target is one set of fetches per digest),
// and the process's peak resident memory. Baseline in the same run: 200 Pods, one per digest (the
// same registry work, without the 4,800 Pods that share a digest). Medians of 3 runs each, every
// run a fresh process with a cold cache. A measurement, not a test: it fails only on a wrong
// answer (an object that does not pass) or more registry requests than one set per digest.
//
//   SIGNET_BENCH_AUDIT_PODS=N   Pods of the large case (default 5,000)
//   SIGNET_KEEP_RUN_DIR=1       keep the run directory (manifests, policy)
import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as testbed from '@signet/testbed';
import { startCountingProxy } from './counting-proxy.ts';
import { memoryOf } from './proc-stats.ts';

const DIGESTS = 200;
const PODS = Number(process.env.SIGNET_BENCH_AUDIT_PODS ?? 5_000);
const RUNS = 3;
const SIGNET = fileURLToPath(new URL('../dist/bin/signet.js', import.meta.url));

interface Run {
  readonly seconds: number;
  readonly requests: number;
  readonly peakMiB: number;
}

/** 200 images `team/app:vN`, each signed (keyed, legacy `.sig`), pushed and signed 4 at a time. */
async function prepare(runDir: string, group: testbed.ProcessGroup) {
  const { crane } = await testbed.ensureTools(['crane', 'cosign', 'registry']);
  const registry = await testbed.startRegistry({ referrers: false, group });
  const cosign = await testbed.createCosign({ workDir: runDir });
  const key = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
  const digests: string[] = new Array(DIGESTS);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < DIGESTS; i = next++) {
      const digest = await testbed.pushRandomImage(registry, 'team/app', `v${i}`, { crane, workDir: runDir });
      await cosign.signLegacyKeyed(`${registry.host}/team/app@${digest}`, key);
      digests[i] = digest;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: 4 }, worker));
  console.log(`prepared ${DIGESTS} signed images in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { registry, publicKey: await readFile(key.publicKey, 'utf8'), digests };
}

function policyYaml(host: string, publicKey: string): string {
  const key = publicKey.trim().split('\n').join('\n          ');
  return `apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: release }
spec:
  images: [{ glob: "${host}/team/**" }]
  authorities:
    - name: release-key
      key:
        data: |
          ${key}
`;
}

/**
 * `count` running Pods in 50 namespaces, as `kubectl get pods -A -o json` prints them: spec
 * `team/app:vN` (a tag), status `imageID` the digest the runtime pulled, as a kubelet reports it;
 * Pod i runs digest i mod 200.
 */
function podsJson(host: string, digests: readonly string[], count: number): string {
  const items = Array.from({ length: count }, (_, i) => {
    const n = i % digests.length;
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `pod-${i}`, namespace: `team-${i % 50}`, uid: `uid-${i}` },
      spec: { containers: [{ name: 'app', image: `${host}/team/app:v${n}` }] },
      status: {
        phase: 'Running',
        containerStatuses: [
          { name: 'app', image: `${host}/team/app:v${n}`, imageID: `${host}/team/app@${digests[n]}` },
        ],
      },
    };
  });
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
}

/** One `signet audit -f` process; its peak RSS read from /proc while it runs. */
async function auditOnce(args: readonly string[], expected: number): Promise<Omit<Run, 'requests'>> {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [SIGNET, 'audit', ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: 'production', HOME: '/nonexistent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  let peakMiB = 0;
  const sampler = setInterval(() => {
    if (child.pid !== undefined)
      memoryOf(child.pid).then(
        (m) => {
          peakMiB = Math.max(peakMiB, m.peakMiB);
        },
        () => undefined,
      );
  }, 20);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(sampler);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (code !== 0) throw new Error(`signet audit exited ${code}: ${stderr.slice(0, 2000)}`);
  const report = JSON.parse(stdout) as { summary: Record<string, number> };
  if (report.summary.pass !== expected)
    throw new Error(`expected ${expected} passing objects, got ${JSON.stringify(report.summary)}`);
  return { seconds, peakMiB };
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

async function main(): Promise<void> {
  const runDir = await testbed.createRunDir('signet-audit-bench-');
  const group = new testbed.ProcessGroup({ runDir, graceMs: 2000 });
  try {
    const { registry, publicKey, digests } = await prepare(runDir, group);
    const proxy = await startCountingProxy(registry.host);
    const policy = join(runDir, 'policy.yaml');
    await writeFile(policy, policyYaml(proxy.host, publicKey));
    const cases = [
      { name: `${DIGESTS} Pods, one per digest (baseline)`, pods: DIGESTS },
      { name: `${PODS} Pods over ${DIGESTS} digests`, pods: PODS },
    ];
    const results: { name: string; pods: number; runs: Run[] }[] = [];
    for (const c of cases) {
      const file = join(runDir, `pods-${c.pods}.json`);
      await writeFile(file, podsJson(proxy.host, digests, c.pods));
      const args = [
        '-f',
        file,
        '--policy-file',
        policy,
        '--insecure-registry',
        proxy.host,
        '-o',
        'json',
        '-q',
      ];
      const runs: Run[] = [];
      for (let i = 0; i < RUNS; i++) {
        const before = proxy.count();
        const run = await auditOnce(args, c.pods);
        runs.push({ ...run, requests: proxy.count() - before });
      }
      results.push({ ...c, runs });
    }
    await proxy.close();
    const [baseline, large] = results;
    if (!baseline || !large) throw new Error('two cases expected');
    const perDigest = median(baseline.runs.map((r) => r.requests)) / DIGESTS;
    console.log(`\nsignet audit -f (${RUNS} runs each, medians; every run a fresh process, cold cache)`);
    console.log(
      'case                                 wall s  Pods/s   registry requests  per digest  peak RSS MiB',
    );
    for (const r of results) {
      const seconds = median(r.runs.map((x) => x.seconds));
      const requests = median(r.runs.map((x) => x.requests));
      console.log(
        `${r.name.padEnd(36)} ${seconds.toFixed(2).padStart(6)}  ${(r.pods / seconds).toFixed(0).padStart(6)}   ${String(requests).padStart(17)}  ${(requests / DIGESTS).toFixed(2).padStart(10)}  ${median(
          r.runs.map((x) => x.peakMiB),
        )
          .toFixed(0)
          .padStart(12)}`,
      );
    }
    const largeRequests = Math.max(...large.runs.map((r) => r.requests));
    const ratio = median(large.runs.map((r) => r.seconds)) / median(baseline.runs.map((r) => r.seconds));
    console.log(
      `\n${PODS} Pods / ${DIGESTS} Pods: ${ratio.toFixed(2)}x the wall time for ${(PODS / DIGESTS).toFixed(0)}x the Pods; ` +
        `registry requests ${largeRequests} = ${(largeRequests / DIGESTS).toFixed(2)} per digest (baseline ${perDigest.toFixed(2)})`,
    );
    if (largeRequests > perDigest * DIGESTS)
      throw new Error(
        `more registry requests (${largeRequests}) than one set per digest (${perDigest * DIGESTS})`,
      );
  } finally {
    await group.stopAll();
    if (process.env.SIGNET_KEEP_RUN_DIR) console.log(`run directory kept: ${runDir}`);
    else await rm(runDir, { recursive: true, force: true });
  }
}

await main();
