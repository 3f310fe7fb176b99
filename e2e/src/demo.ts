#!/usr/bin/env node
// `pnpm demo` (or `pnpm demo --naive`): the stuck-rollout story on a real control plane, told for
// someone new to Signet. It starts everything on 127.0.0.1, shows the commands and tables as the
// rollout proceeds, and stops everything when done or on Ctrl-C. `--kind`: the same story in a
// kind cluster (real nodes and containers, Signet from its image and chart; needs Docker).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheRoot, ensureTools } from '@signet/testbed';
import { stringify } from 'yaml';
import { startLocalCluster } from './cluster/index.js';
import { demoTools } from './demo-tools.js';
import { startKindCluster } from './kind/kind-cluster.js';
import { prepareKindTestImages } from './kind/kind-images.js';
import { deployKindSignet } from './kind/kind-signet.js';
import { freePortInRange } from './kind/ports.js';
import { kindUnavailableReason } from './kind/preflight.js';
import { startNaiveWebhook } from './naive-webhook.js';
import type { KindCluster } from './providers/kind.js';
import type { TestCluster } from './providers/test-cluster.js';
import { createNamespace, installPolicyCrds } from './scenarios/kube.js';
import { keyPolicy } from './scenarios/policies.js';
import { INCLUDE_LABEL, type RolloutObservation, runRolloutScenario } from './scenarios/rollout.js';
import { KEY_POLICY } from './scenarios/signet-environment.js';
import { prepareTestImages, type TestImages } from './scenarios/test-images.js';
import { SIGNET_NAMESPACE, startSignet } from './signet-webhook.js';
import type { AdmissionRecord } from './webhooks/admission-log.js';
import type { WebhookUnderTest } from './webhooks/webhook-under-test.js';

const NAMESPACE = 'test';
/**
 * What building costs a first run, measured with empty Go module, Go build and tool caches on the
 * 2-core machine: the nine local tools took 34 minutes while other sessions kept the load average
 * at 7 to 37 (median 18), on 19 minutes of CPU; the kind suite's tools build on top of them.
 */
const FIRST_RUN_COST = {
  local:
    'measured 34 minutes on a busy 2-core machine (load average 7 to 37) for 19 minutes of CPU, so about 12 to 15 on a quiet one',
  kind: 'the control plane’s (about 12 to 15 minutes on a quiet 2-core machine), then about 3 more for kind’s',
} as const;
const DEPLOYMENT = 'foo-bar';

const out = (line = '') => process.stdout.write(`${line}\n`);
const indent = (text: string, by = '    ') =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => `${by}${line}`)
    .join('\n');
const section = (title: string) => out(`\n== ${title} ${'='.repeat(Math.max(0, 74 - title.length))}`);
const command = (text: string) => out(`  $ ${text}`);
const note = (text: string) => out(`  ${text}`);
const short = (image: string) => image.replace(/@sha256:([0-9a-f]{12})[0-9a-f]+$/, '@sha256:$1…');

interface Stoppable {
  stop(): Promise<void>;
}

async function main(): Promise<number> {
  const naive = process.argv.includes('--naive');
  const kind = process.argv.includes('--kind');
  if (process.argv.some((arg) => arg === '--help' || arg === '-h')) {
    out(
      'usage: pnpm demo [--naive] [--kind]\n' +
        '  --naive  run the scenario against a naive webhook (the bug), not Signet\n' +
        '  --kind   in a kind cluster: real nodes and containers, Signet from its image and chart (needs Docker)',
    );
    return 0;
  }
  if (kind) {
    const unavailable = await kindUnavailableReason();
    if (unavailable) {
      out(`pnpm demo --kind cannot run here: ${unavailable}`);
      return 1;
    }
  }
  const stoppers: Stoppable[] = [];
  let stopping: Promise<void> | undefined;
  const stopAll = () => {
    stopping ??= (async () => {
      for (const s of stoppers.reverse()) await s.stop().catch(() => undefined);
    })();
    return stopping;
  };
  process.once('SIGINT', () => {
    out('\ninterrupted: stopping everything…');
    void stopAll().then(() => process.exit(130));
  });
  try {
    intro(naive, kind);
    await buildTools(kind);
    const cluster = kind ? await startKind() : await startCluster();
    stoppers.push(cluster);
    const images = kind ? await pushKindImages(cluster as KindCluster) : await pushImages(cluster);
    const webhook = naive
      ? await startNaive(
          cluster,
          images,
          stoppers,
          kind ? (cluster as KindCluster).network.gateway : undefined,
        )
      : kind
        ? await startKindSignet(cluster as KindCluster, images, stoppers)
        : await startSignetWebhook(cluster, images, stoppers);
    const observed = await rollout(cluster, webhook, images, naive);
    await outcome(cluster, webhook, observed, naive);
    return observed.completed === !naive ? 0 : 1;
  } finally {
    section('Cleaning up');
    await stopAll();
    note('every process stopped; the run directory is removed (SIGNET_E2E_KEEP=1 keeps it)');
  }
}

function intro(naive: boolean, kind: boolean): void {
  out('Signet demo: a Deployment moves from an unsigned image to a signed one in an enforced namespace.');
  out('');
  out('kube-controller-manager rolls it out by scaling the NEW ReplicaSet up and the OLD one down.');
  out('The scale-down is a full UPDATE of the old ReplicaSet, whose template still names the unsigned');
  out('image. A webhook that re-verifies that template denies the scale-down, and the rollout never');
  out('finishes. Signet admits it (it cannot start a container) and verifies every new Pod instead.');
  out('');
  out(
    naive
      ? 'This run: --naive, a webhook that verifies every UPDATE like policy-controller did. Expect it STUCK.'
      : 'This run: Signet. Expect the rollout to COMPLETE. (`pnpm demo --naive` shows the bug.)',
  );
  if (kind) {
    out('Everything runs in a kind cluster on this machine: two nodes (real kubelets, containerd, runc), a');
    out('registry container on its network, runnable busybox images, cosign, and the webhook.');
    return;
  }
  out('Everything runs on 127.0.0.1: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,');
  out('kwok (fake nodes and kubelets: Pods run no containers), a registry, cosign and the webhook.');
}

async function startKind(): Promise<KindCluster> {
  section('2. A kind cluster (node image built offline on first use, then cached)');
  const started = Date.now();
  const cluster = await startKindCluster({
    onProgress: (line) => {
      if (!line.includes(': cached at ')) note(line);
    },
  });
  note(`cluster ready in ${seconds(started)}`);
  command('kubectl get nodes -o wide');
  out(indent((await cluster.kubectl(['get', 'nodes', '-o', 'wide'])).stdout));
  return cluster;
}

async function pushKindImages(cluster: KindCluster): Promise<TestImages> {
  section("3. Two runnable images in the cluster's registry, one signed");
  const images = await prepareKindTestImages(cluster);
  command(`crane append -f busybox.tar … -t ${images.registry.host}/app:v1   # unsigned`);
  command(`crane append -f busybox.tar … -t ${images.registry.host}/app:v2`);
  command(`cosign sign --key cosign.key ${short(images.signed)}   # app:v2 only`);
  note(`unsigned: ${images.unsigned}`);
  note(`signed:   ${images.signed}`);
  return images;
}

async function startKindSignet(
  cluster: KindCluster,
  images: TestImages,
  stoppers: Stoppable[],
): Promise<WebhookUnderTest> {
  section('4. Signet from its image and Helm chart, with a ClusterImagePolicy');
  command(
    'apps/webhook/image/build-offline.sh signet:e2e-… --attestations DIR   # FROM scratch: Debian libraries, Node, the app; SBOM, provenance',
  );
  command(
    'crane push signet.tar REGISTRY/signet; cosign sign; cosign attest --type cyclonedx / slsaprovenance1',
  );
  command(
    `helm install signet apps/webhook/chart -n ${SIGNET_NAMESPACE} --create-namespace --set image.registry=REGISTRY --set image.digest=sha256:… …`,
  );
  const policy = keyPolicy({
    name: KEY_POLICY,
    images: [`${images.registry.host}/app*`],
    publicKeyPem: await readFile(images.key.publicKey, 'utf8'),
  });
  command('kubectl apply -f policy.yaml');
  out(indent(stringify(policy), '      '));
  const signet = await deployKindSignet(cluster, {
    insecureRegistries: [images.registry.host],
    policies: [policy],
    policyNames: [KEY_POLICY],
    onProgress: note,
  });
  stoppers.push(signet);
  command(`kubectl get pods -n ${SIGNET_NAMESPACE} -o wide`);
  out(indent((await cluster.kubectl(['get', 'pods', '-n', SIGNET_NAMESPACE, '-o', 'wide'])).stdout));
  return signet;
}

async function buildTools(kind: boolean): Promise<void> {
  const tools = demoTools(kind);
  section('1. Tools');
  note(`pinned binaries, built from the Go module proxy on first use, cached in ${cacheRoot()}/bin`);
  const cost = kind ? FIRST_RUN_COST.kind : FIRST_RUN_COST.local;
  note(
    `(a first run builds these ${tools.length} programs from source, two at a time: ${cost}; later runs: none)`,
  );
  const started = Date.now();
  let cached = 0;
  await ensureTools(tools, {
    concurrency: 2,
    onProgress: (event) => {
      if (event.kind === 'cached') cached += 1;
      else note(event.message);
    },
  });
  note(`${tools.length} tools ready (${cached} cached) in ${seconds(started)}`);
}

async function startCluster(): Promise<TestCluster> {
  section('2. A Kubernetes control plane on loopback');
  const started = Date.now();
  const cluster = await startLocalCluster({
    onProgress: (event) => {
      if (/ready after|ready in|registered/.test(event.message)) note(event.line);
    },
  });
  note(`cluster ready in ${seconds(started)}`);
  command('kubectl get nodes');
  out(indent((await cluster.kubectl(['get', 'nodes'])).stdout));
  return cluster;
}

async function pushImages(cluster: TestCluster): Promise<TestImages> {
  section('3. Two images in a local registry, one signed');
  const images = await prepareTestImages({ group: cluster.group, workDir: cluster.runDir });
  command(`crane append … -t ${images.registry.host}/app:v1   # unsigned`);
  command(`crane append … -t ${images.registry.host}/app:v2`);
  command(`cosign sign --key cosign.key ${short(images.signed)}   # app:v2 only`);
  note(`unsigned: ${images.unsigned}`);
  note(`signed:   ${images.signed}`);
  return images;
}

async function startNaive(
  cluster: TestCluster,
  images: TestImages,
  stoppers: Stoppable[],
  host?: string,
): Promise<WebhookUnderTest> {
  section('4. The naive webhook (test fixture, not Signet)');
  note('It runs `cosign verify --key cosign.pub` on every image of every CREATE and UPDATE.');
  const webhook = await startNaiveWebhook({
    cosign: images.cosign,
    publicKey: images.key.publicKey,
    logFile: join(cluster.runDir, 'naive-webhook.log'),
    // In kind, the API server reaches the host on the cluster network's gateway address.
    ...(host ? { host, port: await freePortInRange(host) } : {}),
  });
  stoppers.push(webhook);
  note(`listening at ${webhook.url}`);
  return webhook;
}

async function startSignetWebhook(
  cluster: TestCluster,
  images: TestImages,
  stoppers: Stoppable[],
): Promise<WebhookUnderTest> {
  section('4. Signet, with a ClusterImagePolicy');
  await Promise.all([installPolicyCrds(cluster), createNamespace(cluster, SIGNET_NAMESPACE)]);
  command('kubectl apply -f apps/webhook/chart/files/crds/   # ClusterImagePolicy, TrustRoot');
  const policy = keyPolicy({
    name: KEY_POLICY,
    images: [`${images.registry.host}/app*`],
    publicKeyPem: await readFile(images.key.publicKey, 'utf8'),
  });
  command('kubectl apply -f policy.yaml');
  out(indent(stringify(policy), '      '));
  await cluster.apply(policy);
  const signet = await startSignet({ cluster, insecureRegistries: [images.registry.host] });
  stoppers.push(signet);
  await signet.waitForPolicies([KEY_POLICY]);
  const [, cli = '', ...args] = signet.commandLine;
  command(`node ${cli.replace(/.*\/apps\//, 'apps/')} ${args.join(' ')}`);
  note(`ready (GET ${signet.opsUrl}/readyz -> 200); log: ${signet.logFile}`);
  return signet;
}

async function rollout(
  cluster: TestCluster,
  webhook: WebhookUnderTest,
  images: TestImages,
  naive: boolean,
): Promise<RolloutObservation> {
  section('5. The rollout');
  const commands: Record<string, string[]> = {
    namespace: [`kubectl create namespace ${NAMESPACE}`],
    'unsigned rollout': [
      `kubectl apply -f deployment.yaml   # ${DEPLOYMENT}: 2 × app:v1 (unsigned), maxSurge 1, maxUnavailable 0, minReadySeconds 3`,
      `kubectl rollout status deployment/${DEPLOYMENT}   # before any policy applies`,
    ],
    enforce: [
      `kubectl label namespace ${NAMESPACE} ${INCLUDE_LABEL}=true`,
      'kubectl apply -f webhook-configurations.yaml   # validating + mutating, opt-in namespaces',
    ],
  };
  const table = async () => {
    const result = await cluster.kubectl(['get', 'deploy,rs,pod', '--namespace', NAMESPACE]);
    out(indent(result.stdout));
  };
  const deadlineMs = naive ? 30_000 : 60_000;
  const observed = await runRolloutScenario(cluster, webhook, {
    unsignedImage: images.unsigned,
    signedImage: images.signed,
    namespace: NAMESPACE,
    deployment: DEPLOYMENT,
    rolloutDeadlineMs: deadlineMs,
    minReadySeconds: 3,
    onProgress: (message) => {
      const step = /^(.+): done in/.exec(message)?.[1];
      if (step && commands[step]) for (const c of commands[step]) command(c);
      else if (message.startsWith('updated deployment')) {
        command(`kubectl set image deployment/${DEPLOYMENT} app=${short(images.signed)}   # app:v2, signed`);
        note(`watching for up to ${deadlineMs / 1000} s, a table at every change:`);
      } else if (/^\[\+[\d.]+s\]/.test(message)) note(message);
    },
    onStateChange: table,
  });
  return observed;
}

async function outcome(
  cluster: TestCluster,
  webhook: WebhookUnderTest,
  observed: RolloutObservation,
  naive: boolean,
): Promise<void> {
  section('6. Outcome');
  command(`kubectl get deploy,rs,pod --namespace ${NAMESPACE}`);
  out(indent((await cluster.kubectl(['get', 'deploy,rs,pod', '--namespace', NAMESPACE])).stdout));
  const old = observed.oldReplicaSet;
  if (observed.completed) {
    note(
      `COMPLETED in ${observed.secondsToComplete} s: the old ReplicaSet ${old?.name} is at 0, the new one runs 2 Pods.`,
    );
  } else {
    note(
      `STUCK: after ${observed.watchedSeconds} s the old ReplicaSet ${old?.name} still wants ${old?.desired} Pods;`,
    );
    note(
      `kubectl get deploy says READY ${observed.deployment.readyColumn} (3 Pods for 2 desired) and it stays that way.`,
    );
  }
  const scaleDowns = observed.admissions.filter(
    (a) =>
      a.endpoint === 'validate' &&
      a.kind === 'ReplicaSet' &&
      a.operation === 'UPDATE' &&
      a.name === old?.name,
  );
  note(
    `The webhook's decisions on the deployment controller's UPDATEs of ${old?.name} (${webhook.logFile}):`,
  );
  for (const record of scaleDowns) out(indent(describe(record), '      '));
  if (naive && observed.controllerDenials[0]) {
    note('The denial, as the webhook logged it:');
    out(indent(JSON.stringify(JSON.parse(observed.controllerDenials[0].line), null, 2), '      '));
    note('The deployment controller ignores the error of its scale-down and does not retry on its own.');
  }
  if (!naive) {
    const pods = observed.admissions.filter(
      (a) => a.endpoint === 'validate' && a.kind === 'Pod' && a.operation === 'CREATE',
    );
    note(
      `and on the new Pods: ${pods.map((p) => `${p.decision}/${p.rule}`).join(', ') || 'none'} (every Pod CREATE is verified)`,
    );
  }
}

function describe(record: AdmissionRecord): string {
  return `${record.operation} ${record.kind} ${record.name} by ${record.user}: ${record.decision} (${record.rule})${
    record.reason ? `: ${record.reason}` : ''
  }`;
}

function seconds(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
