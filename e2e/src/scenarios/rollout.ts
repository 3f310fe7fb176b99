import { stringify } from 'yaml';
import type { TestCluster } from '../providers/test-cluster.js';
import type { AdmissionRecord } from '../webhooks/admission-log.js';
import type { WebhookUnderTest } from '../webhooks/webhook-under-test.js';
import { createNamespace, must, poll } from './kube.js';
import {
  type DeploymentState,
  describeRolloutState,
  type ReplicaSetState,
  type RolloutState,
  readRolloutState,
} from './rollout-state.js';

/** The label that opts a namespace into enforcement (the one policy-controller users already set). */
export const INCLUDE_LABEL = 'policy.sigstore.dev/include';
/** The user kube-controller-manager's deployment controller acts as (`--use-service-account-credentials`). */
export const DEPLOYMENT_CONTROLLER_USER = 'system:serviceaccount:kube-system:deployment-controller';

export interface RolloutScenarioOptions {
  /** Image the Deployment runs before the policy applies (fails the policy). */
  readonly unsignedImage: string;
  /** Image the Deployment is updated to (passes the policy). */
  readonly signedImage: string;
  /**
   * An image the webhook must deny once it is registered (default `unsignedImage`): for a rollout
   * between two images that both pass the policies in force at the start.
   */
  readonly enforcementProbeImage?: string;
  readonly namespace?: string;
  readonly deployment?: string;
  readonly replicas?: number;
  /** How long the rollout may take before the scenario reports it stuck (default 60 s). */
  readonly rolloutDeadlineMs?: number;
  /**
   * `spec.minReadySeconds` of the Deployment: a new Pod counts as available only after this long,
   * so each rollout step takes at least that (kwok makes Pods Ready at once). Default none.
   */
  readonly minReadySeconds?: number;
  /**
   * Something done once in the middle of the rollout (say, `kubectl scale`): `action` runs the
   * first time `when` is true of a state the watch reads. Its time goes into `timings.midRollout`.
   */
  readonly midRollout?: {
    readonly when: (state: RolloutState) => boolean;
    readonly action: () => Promise<void>;
  };
  readonly onProgress?: (message: string) => void;
  /** Called with every state the watch reads whose summary differs from the last one. */
  readonly onStateChange?: (state: RolloutState) => Promise<void> | void;
}

/** What happened, for the caller to assert on: the same observation for every webhook. */
export interface RolloutObservation {
  /** The rollout finished within the deadline (`kubectl rollout status` would succeed). */
  readonly completed: boolean;
  /** Seconds from the image update to completion, when it completed. */
  readonly secondsToComplete: number | undefined;
  /** Seconds the rollout was watched. */
  readonly watchedSeconds: number;
  readonly deployment: DeploymentState;
  /** The ReplicaSet of the unsigned template, and the one of the signed template. */
  readonly oldReplicaSet: ReplicaSetState | undefined;
  readonly newReplicaSet: ReplicaSetState | undefined;
  /** Admissions the webhook answered from the image update on (the probe's are left out). */
  readonly admissions: readonly AdmissionRecord[];
  /** Of those, the denied ReplicaSet UPDATEs sent by the deployment controller. */
  readonly controllerDenials: readonly AdmissionRecord[];
  /** Seconds spent in each step, for the README's figures. */
  readonly timings: Readonly<Record<string, number>>;
  /** Every distinct state the watch saw, oldest first. */
  readonly states: readonly RolloutState[];
  /** Whether the `midRollout` action ran (it only runs while the rollout is incomplete). */
  readonly midRolloutDone: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The stuck-rollout scenario: a Deployment runs an unsigned image in a namespace that is not yet
 * enforced; then the namespace is opted in, the webhook registered, and the Deployment updated to a
 * signed image. The rollout is watched until it completes or the deadline passes.
 */
export async function runRolloutScenario(
  cluster: TestCluster,
  webhook: WebhookUnderTest,
  options: RolloutScenarioOptions,
): Promise<RolloutObservation> {
  const namespace = options.namespace ?? 'test';
  const name = options.deployment ?? 'foo-bar';
  const report = options.onProgress ?? (() => {});
  const timings: Record<string, number> = {};
  const timed = async <T>(step: string, work: () => Promise<T>): Promise<T> => {
    const started = Date.now();
    const result = await work();
    timings[step] = round((Date.now() - started) / 1000);
    report(`${step}: done in ${timings[step]}s`);
    return result;
  };

  await timed('namespace', () => createNamespace(cluster, namespace));
  await timed('unsigned rollout', () => deployUnsigned(cluster, namespace, name, options));
  await timed('enforce', async () => {
    await cluster
      .kubectl(['label', 'namespace', namespace, `${INCLUDE_LABEL}=true`, '--overwrite'])
      .then(must);
    await cluster.apply(webhook.configurations());
    await waitForEnforcement(
      cluster,
      webhook,
      namespace,
      options.enforcementProbeImage ?? options.unsignedImage,
    );
  });
  const before = (await webhook.admissions()).length;
  const updated = Date.now();
  await cluster
    .kubectl(['set', 'image', `deployment/${name}`, `app=${options.signedImage}`, '--namespace', namespace])
    .then(must);
  report(`updated deployment/${name} to the signed image; watching the rollout`);
  const watch: Watch = {
    deadlineMs: options.rolloutDeadlineMs ?? 60_000,
    report,
    states: [],
    midRolloutDone: false,
    ...(options.midRollout ? { midRollout: options.midRollout } : {}),
    ...(options.onStateChange ? { onStateChange: options.onStateChange } : {}),
  };
  const { state, completedAfter } = await timed('rollout', () =>
    watchRollout(cluster, namespace, name, watch, timings),
  );
  const admissions = (await webhook.admissions()).slice(before);
  return {
    completed: completedAfter !== undefined,
    secondsToComplete: completedAfter === undefined ? undefined : round(completedAfter / 1000),
    watchedSeconds: round((Date.now() - updated) / 1000),
    deployment: state.deployment,
    oldReplicaSet: state.replicaSets.find((rs) => rs.image === options.unsignedImage),
    newReplicaSet: state.replicaSets.find((rs) => rs.image === options.signedImage),
    admissions,
    controllerDenials: admissions.filter(
      (a) =>
        a.decision === 'denied' &&
        a.kind === 'ReplicaSet' &&
        a.operation === 'UPDATE' &&
        a.user === DEPLOYMENT_CONTROLLER_USER,
    ),
    timings,
    states: watch.states,
    midRolloutDone: watch.midRolloutDone,
  };
}

const round = (value: number) => Math.round(value * 10) / 10;

function deploymentManifest(
  namespace: string,
  name: string,
  replicas: number,
  image: string,
  minReadySeconds?: number,
): object {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas,
      ...(minReadySeconds === undefined ? {} : { minReadySeconds }),
      selector: { matchLabels: labels },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'app', image }] },
      },
    },
  };
}

async function deployUnsigned(
  cluster: TestCluster,
  namespace: string,
  name: string,
  options: RolloutScenarioOptions,
): Promise<void> {
  await cluster.apply(
    deploymentManifest(
      namespace,
      name,
      options.replicas ?? 2,
      options.unsignedImage,
      options.minReadySeconds,
    ),
  );
  const status = await cluster.kubectl(
    ['rollout', 'status', `deployment/${name}`, '--namespace', namespace, '--timeout=90s'],
    { timeoutMs: 100_000 },
  );
  if (status.exitCode !== 0) {
    const state = await readRolloutState(cluster, namespace, name);
    throw new Error(
      `the unsigned Deployment did not become Ready before enforcement: ${status.stderr.trim()}; ${describeRolloutState(state)}`,
    );
  }
}

/**
 * The API server picks up a new webhook configuration asynchronously. A server-side dry run of a
 * Deployment with the unsigned image is denied once the webhook is in the path; nothing is stored.
 */
async function waitForEnforcement(
  cluster: TestCluster,
  webhook: WebhookUnderTest,
  namespace: string,
  unsignedImage: string,
): Promise<void> {
  const probe = stringify(deploymentManifest(namespace, 'webhook-probe', 1, unsignedImage));
  await poll(`${webhook.name} to deny an unsigned Deployment`, 30_000, async () => {
    const result = await cluster.kubectl(['apply', '--dry-run=server', '-f', '-'], { input: probe });
    if (result.exitCode !== 0 && /admission webhook .* denied the request/.test(result.stderr)) return true;
    return result.exitCode === 0 ? 'admitted' : result.stderr.trim();
  });
}

interface Watch {
  readonly deadlineMs: number;
  readonly report: (message: string) => void;
  readonly midRollout?: RolloutScenarioOptions['midRollout'];
  readonly onStateChange?: RolloutScenarioOptions['onStateChange'];
  readonly states: RolloutState[];
  midRolloutDone: boolean;
}

async function watchRollout(
  cluster: TestCluster,
  namespace: string,
  name: string,
  watch: Watch,
  timings: Record<string, number>,
): Promise<{ state: RolloutState; completedAfter: number | undefined }> {
  const started = Date.now();
  let last = '';
  let lastReport = 0;
  for (;;) {
    const state = await readRolloutState(cluster, namespace, name);
    const elapsed = Date.now() - started;
    const summary = describeRolloutState(state);
    if (summary !== last) {
      watch.states.push(state);
      await watch.onStateChange?.(state);
    }
    if (summary !== last || Date.now() - lastReport > 10_000) {
      watch.report(`[+${(elapsed / 1000).toFixed(1)}s] ${summary}`);
      last = summary;
      lastReport = Date.now();
    }
    // The Deployment, ReplicaSets and Pods are read by separate calls: completion counts only once
    // they agree (every ReplicaSet runs exactly its desired Pods, all Ready).
    if (state.deployment.complete && settled(state)) return { state, completedAfter: elapsed };
    if (elapsed >= watch.deadlineMs) return { state, completedAfter: undefined };
    if (watch.midRollout && !watch.midRolloutDone && watch.midRollout.when(state)) {
      const actionStarted = Date.now();
      await watch.midRollout.action();
      watch.midRolloutDone = true;
      timings.midRollout = round((Date.now() - actionStarted) / 1000);
      watch.report(`[+${((Date.now() - started) / 1000).toFixed(1)}s] mid-rollout action done`);
      continue;
    }
    await sleep(1_000);
  }
}

/** Every ReplicaSet runs exactly as many Pods as it wants, and all of them are Ready. */
function settled(state: RolloutState): boolean {
  return state.replicaSets.every((rs) => rs.pods === rs.desired && rs.readyPods === rs.desired);
}
