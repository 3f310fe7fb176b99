// `pnpm bench` (e2e): what a start of `signet serve` costs with policies from the cluster (the
// Kubernetes client loaded, the policies listed and watched) against the same server with the same
// policies from a file (no Kubernetes client), in the same run, rounds interleaved; and, given
// SIGNET_BENCH_BASELINE_CLI=<another build's dist/bin/signet.js>, that build in both modes too.
// A measurement, not a test: it fails only on a wrong outcome (a review not admitted), never on
// speed.
//
// Per start, with the chart's Node flags, polling /validate every 20 ms from spawning the process:
//   - to the first admitted review that needs no policy (a ReplicaSet scale-down), answered as soon
//     as the server listens;
//   - to the first admitted review that needs the policies (a Pod CREATE of a digest under a
//     `static: pass` policy: no registry), answered 503 until they are loaded; and the CPU time the
//     process used until then, which the machine's load changes less than the wall time;
//   - first verification: 2 s later, a Pod CREATE of a cosign-signed image (keyed policy, cold
//     cache): a new replica's first review comes once its Pod is Ready and the Service lists it,
//     a readiness probe later (the chart's probes every 5 s), and Signet warms up meanwhile;
//   - RSS after both.
// Each round starts every arm twice: with an empty V8 compile cache (a new Pod) and with the one
// the first start left (a restarted container); and a build that has `bin/fill-compile-cache.js`
// a third time, with a cache that script filled, as the image ships it (a new Pod of the image).
// Each start ends as a container's does, with SIGTERM (no drain): Node writes the compile cache as
// the process exits, so a SIGKILLed start would leave none. Then, per arm, RSS after 100,000
// scale-down reviews.
//
// Environment: SIGNET_BENCH_ROUNDS=N rounds (default 5); SIGNET_BENCH_BASELINE_CLI as above.
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import * as testbed from '@signet/testbed';
import { stringify } from 'yaml';
import { median, procStats } from './proc-stats.ts';

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
const { SIGNET_NAMESPACE, signetCliPath }: typeof import('../src/signet-webhook.js') = await import(
  dist('signet-webhook.js')
);
const { createCertificateAuthority, issueServingCertificate } = await import('@signet/webhook');

const ROUNDS = Math.max(1, Number(process.env.SIGNET_BENCH_ROUNDS ?? 5));
const BASELINE_CLI = process.env.SIGNET_BENCH_BASELINE_CLI;
/** Signet's Node flags as the chart and the image set them. */
const CHART_NODE_OPTIONS = '--max-old-space-size=256 --max-semi-space-size=8';
const TARGET_START_MS = 2000;
/** From ready to the first verification: within the chart's readiness probe period (5 s). */
const FIRST_REVIEW_AFTER_READY_MS = 2000;

type ArmName = 'cluster' | 'policy-file' | 'baseline-cluster' | 'baseline-policy-file';
interface Arm {
  readonly name: ArmName;
  readonly cli: string;
  readonly policyArgs: readonly string[];
}
interface Start {
  readonly firstCheapMs: number;
  readonly firstAdmittedMs: number;
  readonly cpuMs: number;
  readonly firstVerificationMs: number;
  /** The server's CPU time for that verification (10 ms resolution). */
  readonly firstVerificationCpuMs: number;
  readonly rssMiB: number;
}

function post(
  url: string,
  ca: string,
  body: Buffer,
  agent?: Agent,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', ca, agent: agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', () => resolve({ status: 0, text: '' }));
    req.setTimeout(15_000, () => req.destroy());
    req.end(body);
  });
}

const admitted = (answer: { status: number; text: string }) =>
  answer.status === 200 && /"allowed":\s*true/.test(answer.text);

const fixture = (name: string) =>
  readFile(new URL(`../../packages/k8s-types/test/fixtures/${name}`, import.meta.url), 'utf8');

/** A Pod CREATE review of `image` (the pod-create fixture with one container). */
async function podReview(image: string): Promise<Buffer> {
  const review = JSON.parse(await fixture('pod-create.json'));
  review.request.object.spec.containers = [{ ...review.request.object.spec.containers[0], image }];
  delete review.request.object.spec.initContainers;
  return Buffer.from(JSON.stringify(review));
}

const cluster = await startLocalCluster({ onProgress: () => {} });
const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  console.log(line);
};
let wrong = 0;
try {
  await installPolicyCrds(cluster);
  await createNamespace(cluster, SIGNET_NAMESPACE);
  const registry = await testbed.startRegistry({ referrers: false, group: cluster.group });
  const { crane } = await testbed.ensureTools(['crane', 'cosign']);
  const cosign = await testbed.createCosign({ workDir: cluster.runDir });
  const key = await cosign.generateKeyPair(join(cluster.runDir, 'start-key'), 'start');
  const digest = await testbed.pushRandomImage(registry, 'team/app', 'v1', {
    crane,
    workDir: cluster.runDir,
  });
  const signed = `${registry.host}/team/app@${digest}`;
  await cosign.signLegacyKeyed(signed, key);
  const policies = [
    {
      apiVersion: 'policy.sigstore.dev/v1beta1',
      kind: 'ClusterImagePolicy',
      metadata: { name: 'static' },
      spec: { images: [{ glob: 'registry.example/**' }], authorities: [{ static: { action: 'pass' } }] },
    },
    keyPolicy({
      name: 'signed',
      images: [`${registry.host}/team/**`],
      publicKeyPem: await readFile(key.publicKey, 'utf8'),
    }),
  ];
  await cluster.apply(policies);
  const policyFile = join(cluster.runDir, 'start-policies.yaml');
  await writeFile(policyFile, policies.map((p) => stringify(p)).join('---\n'));
  const needsPolicies = await podReview(`registry.example/app@sha256:${'b'.repeat(64)}`);
  const verification = await podReview(signed);
  const scaleDown = Buffer.from(await fixture('replicaset-scale-down.json'));

  const ca = await createCertificateAuthority('signet-start-bench', 1);
  const serving = await issueServingCertificate(ca, ['127.0.0.1'], 1);
  const certFile = join(cluster.runDir, 'start-tls.crt');
  const keyFile = join(cluster.runDir, 'start-tls.key');
  await writeFile(certFile, serving.cert);
  await writeFile(keyFile, serving.key, { mode: 0o600 });

  const arms: Arm[] = [
    { name: 'cluster', cli: signetCliPath(), policyArgs: [`--kubeconfig=${cluster.kubeconfig}`] },
    { name: 'policy-file', cli: signetCliPath(), policyArgs: [`--policy-file=${policyFile}`] },
    ...(BASELINE_CLI
      ? [
          {
            name: 'baseline-cluster' as const,
            cli: BASELINE_CLI,
            policyArgs: [`--kubeconfig=${cluster.kubeconfig}`],
          },
          {
            name: 'baseline-policy-file' as const,
            cli: BASELINE_CLI,
            policyArgs: [`--policy-file=${policyFile}`],
          },
        ]
      : []),
  ];

  /** Starts `arm` with `cacheDir` as its compile cache; `then` runs while it serves. */
  const serve = async <T>(
    arm: Arm,
    cacheDir: string,
    then: (url: string, pid: number, t0: number) => Promise<T>,
  ) => {
    const [port, opsPort] = [await testbed.freePort(), await testbed.freePort()];
    const t0 = performance.now();
    const child = spawn(
      process.execPath,
      [
        arm.cli,
        'serve',
        `--port=${port}`,
        `--ops-port=${opsPort}`,
        '--host=127.0.0.1',
        '--ops-host=127.0.0.1',
        `--namespace=${SIGNET_NAMESPACE}`,
        ...arm.policyArgs,
        `--tls-cert-file=${certFile}`,
        `--tls-key-file=${keyFile}`,
        `--insecure-registry=${registry.host}`,
        '--audit-interval=0',
        '--log-level=warn',
        '--shutdown-drain=0s',
      ],
      {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: cluster.runDir,
          NODE_ENV: 'production',
          NODE_OPTIONS: CHART_NODE_OPTIONS,
          NODE_COMPILE_CACHE: cacheDir,
        },
        stdio: 'ignore',
      },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      return await then(`https://127.0.0.1:${port}/validate`, child.pid ?? 0, t0);
    } finally {
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(forced);
    }
  };

  const start = (arm: Arm, cacheDir: string) =>
    serve(arm, cacheDir, async (url, pid, t0): Promise<Start> => {
      const firstAdmitted = async (review: Buffer) => {
        while (performance.now() - t0 < 60_000) {
          if (admitted(await post(url, ca.cert, review))) return performance.now() - t0;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return Number.NaN;
      };
      const firstCheapMs = await firstAdmitted(scaleDown);
      const firstAdmittedMs = await firstAdmitted(needsPolicies);
      const cpuMs = (await procStats(pid)).cpuSeconds * 1000;
      await new Promise((resolve) => setTimeout(resolve, FIRST_REVIEW_AFTER_READY_MS));
      const cpuBefore = (await procStats(pid)).cpuSeconds;
      const t1 = performance.now();
      const verified = await post(url, ca.cert, verification);
      const firstVerificationMs = performance.now() - t1;
      const firstVerificationCpuMs = ((await procStats(pid)).cpuSeconds - cpuBefore) * 1000;
      if (Number.isNaN(firstAdmittedMs) || !admitted(verified)) {
        wrong++;
        console.error(
          `${arm.name}: first admitted ${firstAdmittedMs} ms, verification ${verified.status} ${verified.text.slice(0, 300)}`,
        );
      }
      return {
        firstCheapMs,
        firstAdmittedMs,
        cpuMs,
        firstVerificationMs,
        firstVerificationCpuMs,
        rssMiB: (await procStats(pid)).rssMiB,
      };
    });

  const results: Record<string, Start[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const arm of arms) {
      const cacheDir = await mkdtemp(join(cluster.runDir, `compile-cache-${arm.name}-`));
      const filler = join(dirname(arm.cli), 'fill-compile-cache.js');
      for (const cache of ['cold', 'warm', ...(existsSync(filler) ? (['filled'] as const) : [])]) {
        let dir = cacheDir;
        if (cache === 'filled') {
          dir = await mkdtemp(join(cluster.runDir, `compile-cache-${arm.name}-filled-`));
          await promisify(execFile)(process.execPath, [filler, dir], {
            env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: CHART_NODE_OPTIONS },
          });
        }
        const result = await start(arm, dir);
        const key = `${arm.name} ${cache}`;
        results[key] = [...(results[key] ?? []), result];
        console.log(
          `round ${round + 1} ${arm.name} (${cache} compile cache): first admitted scale-down ${result.firstCheapMs.toFixed(0)} ms, needing the policies ${result.firstAdmittedMs.toFixed(0)} ms (${result.cpuMs.toFixed(0)} ms CPU), first verification ${result.firstVerificationMs.toFixed(0)} ms (${result.firstVerificationCpuMs.toFixed(0)} ms CPU), RSS ${result.rssMiB.toFixed(0)} MiB`,
        );
      }
    }
  }

  say(`medians of ${ROUNDS} starts per arm (chart's Node flags)`);
  for (const [name, starts] of Object.entries(results)) {
    const first = median(starts.map((s) => s.firstAdmittedMs));
    const check =
      name.startsWith('cluster') || name.startsWith('baseline-cluster')
        ? ` (target <= ${TARGET_START_MS} ms: ${first <= TARGET_START_MS ? 'met' : 'NOT met'})`
        : '';
    say(
      `${name}: start to first admitted scale-down ${median(starts.map((s) => s.firstCheapMs)).toFixed(0)} ms; to first admitted review needing the policies ${first.toFixed(0)} ms${check} (${median(starts.map((s) => s.cpuMs)).toFixed(0)} ms CPU); first verification ${median(starts.map((s) => s.firstVerificationMs)).toFixed(0)} ms (${median(starts.map((s) => s.firstVerificationCpuMs)).toFixed(0)} ms CPU), RSS ${median(starts.map((s) => s.rssMiB)).toFixed(0)} MiB`,
    );
  }
  for (const cache of ['cold', 'warm', 'filled']) {
    if (results[`cluster ${cache}`] === undefined) continue;
    const of = (arm: ArmName, key: 'firstAdmittedMs' | 'cpuMs' | 'firstVerificationMs', kind = cache) =>
      results[`${arm} ${kind}`]?.map((s) => s[key]) ?? [];
    const whats = {
      firstAdmittedMs: 'start to first admitted review needing the policies',
      cpuMs: 'CPU until then',
      firstVerificationMs: 'first verification',
    } as const;
    for (const key of ['firstAdmittedMs', 'cpuMs'] as const) {
      const ratios = of('cluster', key).map((v, i) => v / (of('policy-file', key)[i] ?? Number.NaN));
      say(
        `${cache}: cluster mode / policy file, ${whats[key]}: ${median(ratios).toFixed(2)}x (rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')})`,
      );
    }
    if (!BASELINE_CLI) continue;
    // A new Pod of the baseline has no filled cache: its cold start is what `filled` replaces.
    const baseline = cache === 'filled' ? 'cold' : cache;
    for (const mode of ['cluster', 'policy-file'] as const)
      for (const key of ['firstAdmittedMs', 'cpuMs', 'firstVerificationMs'] as const) {
        const before = of(mode, key).map(
          (v, i) => v / (of(`baseline-${mode}`, key, baseline)[i] ?? Number.NaN),
        );
        say(
          `${cache}: ${mode}, this build / baseline build (${baseline}), ${whats[key]}: ${median(before).toFixed(2)}x (rounds: ${before.map((r) => r.toFixed(2)).join(', ')})`,
        );
      }
  }

  // Memory after 100,000 cheap reviews, per arm.
  for (const arm of arms) {
    const cacheDir = await mkdtemp(join(cluster.runDir, `compile-cache-${arm.name}-`));
    await serve(arm, cacheDir, async (url, pid, t0) => {
      while (!admitted(await post(url, ca.cert, needsPolicies)) && performance.now() - t0 < 60_000)
        await new Promise((resolve) => setTimeout(resolve, 20));
      await post(url, ca.cert, verification);
      const agent = new Agent({ keepAlive: true, maxSockets: 32, ca: ca.cert });
      let sent = 0;
      let failed = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (sent < 100_000) {
            sent++;
            if (!admitted(await post(url, ca.cert, scaleDown, agent))) failed++;
          }
        }),
      );
      agent.destroy();
      if (failed > 0) wrong++;
      const stats = await procStats(pid);
      say(
        `${arm.name}: after 100,000 scale-down reviews (${failed} not allowed): RSS ${stats.rssMiB.toFixed(0)} MiB, peak ${stats.peakMiB.toFixed(0)} MiB (target <= 256 MiB: ${stats.rssMiB <= 256 ? 'met' : 'NOT met'})`,
      );
    });
  }
} finally {
  await cluster.stop();
}
console.log(`\n${lines.join('\n')}`);
if (wrong > 0) {
  console.error(`FAILED: ${wrong} starts or review runs with a wrong outcome`);
  process.exitCode = 1;
}
