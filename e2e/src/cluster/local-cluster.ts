import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheRoot, createRunDir, ensureTools, type ManagedProcess, ProcessGroup } from '@signet/testbed';
import { type RunningEtcd, startEtcd } from './etcd.js';
import { type RunningApiServer, startApiServer } from './kube-apiserver.js';
import { startControllerManager } from './kube-controller-manager.js';
import { startScheduler } from './kube-scheduler.js';
import { writeKubeconfig } from './kubeconfig.js';
import { Kubectl, type KubectlResult, type KubectlRunOptions, type Manifests } from './kubectl.js';
import { startKwok } from './kwok.js';
import { type ClusterPki, createClusterPki, IDENTITIES, type Identity } from './pki.js';
import { type ProgressListener, ProgressReporter } from './progress.js';
import { type Reaper, startReaper } from './reaper.js';
import { waitUntilUsable } from './usable.js';

export interface LocalClusterOptions {
  /** One call per progress line (component, seconds since start, message). */
  readonly onProgress?: ProgressListener;
  /** How many fake Nodes kwok plays (default 2). */
  readonly nodes?: number;
  /** Keep the run directory (logs, etcd data, PKI) after `stop()`; default: `SIGNET_E2E_KEEP=1`. */
  readonly keepRunDir?: boolean;
  /** Deadline for each start-up step (default 90 s). */
  readonly stepTimeoutMs?: number;
  /** Environment for finding the tool cache (`SIGNET_CACHE_DIR`); default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** More kube-apiserver flags (e.g. `--admission-control-config-file=...`). */
  readonly apiServerArgs?: readonly string[];
}

export type ComponentName = 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'kwok';

/** A running control plane on loopback. Call `stop()` (in `afterAll`) whatever happened. */
export interface LocalCluster {
  /** Fresh temporary directory with every log (`<component>.log`), the PKI and etcd's data. */
  readonly runDir: string;
  /** Admin kubeconfig (bearer token in `system:masters`). */
  readonly kubeconfig: string;
  /** `https://127.0.0.1:PORT` */
  readonly apiServerUrl: string;
  /** PEM CA of the API server's serving certificate. */
  readonly caPem: string;
  /** The cluster's CA and tokens: for kubeconfigs of other identities (client certificates, plugins). */
  readonly pki: ClusterPki;
  /** `http://127.0.0.1:PORT` of etcd (its JSON gateway: `/v3/kv/range`, `/v3/kv/compaction`). */
  readonly etcdUrl: string;
  /** Seconds from the call to a usable cluster (Nodes Ready, default ServiceAccount present). */
  readonly startSeconds: number;
  /** The components as running now (a restarted API server is a new process). */
  readonly processes: Readonly<Record<ComponentName, ManagedProcess>>;
  /** The group the components run in; fixtures may start their own programs in it (stopped first). */
  readonly group: ProcessGroup;
  /** `kubectl <args>` as admin; a non-zero exit is a result, not an exception. */
  kubectl(args: readonly string[], options?: KubectlRunOptions): Promise<KubectlResult>;
  /** `kubectl apply -f -`; a refusal throws with the API server's message. */
  apply(manifests: Manifests): Promise<string>;
  /** `kubectl get <args> -o json`, parsed; throws when kubectl fails. */
  getJson<T = unknown>(args: readonly string[]): Promise<T>;
  /** The last lines of every program's log, for a failing test's report. */
  logTails(lines?: number): Promise<string>;
  /**
   * Stops kube-apiserver, runs `whileDown` (etcd is still up), and starts it again on the same port;
   * resolves once it is ready. Its clients see it vanish and come back.
   */
  restartApiServer(whileDown?: () => Promise<void>): Promise<void>;
  /**
   * Stops every program by pid (SIGTERM, then SIGKILL), last started first, and removes the run
   * directory unless it is to be kept (`keepRunDir` here or in the options: a failed test's logs).
   * Idempotent.
   */
  stop(options?: { readonly keepRunDir?: boolean }): Promise<void>;
}

/** The programs a local cluster runs (built from the Go module proxy on first use). */
export const LOCAL_CLUSTER_TOOLS = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubectl',
  'kwok',
] as const;

/**
 * Starts etcd -> kube-apiserver -> (kube-controller-manager, kube-scheduler, kwok) on free loopback
 * ports in a fresh run directory, registers fake Nodes, and resolves once the cluster can run
 * Pods. On any failure every started program is stopped and the error names the component with
 * the tail of its log; the run directory is kept for the full logs.
 */
export async function startLocalCluster(options: LocalClusterOptions = {}): Promise<LocalCluster> {
  const progress = new ProgressReporter(options.onProgress);
  const runDir = await createRunDir('signet-e2e-');
  const group = new ProcessGroup({ runDir });
  const reaper = startReaper(group);
  progress.report('cluster', `run directory ${runDir}`);
  try {
    return await boot({ runDir, group, reaper, progress, options });
  } catch (error) {
    progress.report('cluster', `start failed; stopping what was started (logs kept in ${runDir})`);
    await stopInReverse(group);
    reaper.dismiss();
    throw error;
  }
}

interface BootContext {
  readonly runDir: string;
  readonly group: ProcessGroup;
  readonly reaper: Reaper;
  readonly progress: ProgressReporter;
  readonly options: LocalClusterOptions;
}

type Binaries = Record<(typeof LOCAL_CLUSTER_TOOLS)[number], string>;

/** What every component start needs. */
interface Step extends BootContext {
  readonly binaries: Binaries;
  readonly env: NodeJS.ProcessEnv;
  readonly pki: ClusterPki;
  readonly timeoutMs: number;
}

async function boot(context: BootContext): Promise<LocalCluster> {
  const { runDir, progress, reaper } = context;
  const binaries = await findBinaries(context);
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: runDir };
  const timeoutMs = context.options.stepTimeoutMs ?? 90_000;
  const [pki, etcd] = await Promise.all([
    createClusterPki(join(runDir, 'pki')),
    progress.during(
      'etcd',
      'GET /health',
      startEtcd({ group: context.group, binary: binaries.etcd, env, readyTimeoutMs: timeoutMs }),
    ),
  ]);
  const step: Step = { ...context, binaries, env, pki, timeoutMs };
  await reaper.refresh();
  const apiServer = await bootApiServer(step, etcd);
  await reaper.refresh();
  const kubeconfigOf = (identity: Identity) =>
    writeKubeconfig(join(runDir, `${identity}.kubeconfig`), {
      server: apiServer.url,
      caPem: pki.caPem,
      user: IDENTITIES[identity].user,
      token: pki.tokens[identity],
    });
  const kubectl = new Kubectl({
    binary: binaries.kubectl,
    kubeconfig: await kubeconfigOf('admin'),
    home: runDir,
  });
  const workers = await bootWorkers(step, kubeconfigOf);
  await reaper.refresh();
  const processes = { etcd: etcd.process, 'kube-apiserver': apiServer.process, ...workers };
  const nodes = context.options.nodes ?? 2;
  await waitUntilUsable({ kubectl, processes: Object.values(processes), nodes, progress, timeoutMs });
  const startSeconds = progress.elapsedSeconds;
  progress.report('cluster', `ready in ${startSeconds.toFixed(1)}s at ${apiServer.url}`);
  const restartApiServer = async (whileDown?: () => Promise<void>) => {
    await processes['kube-apiserver'].stop();
    await whileDown?.();
    processes['kube-apiserver'] = (await bootApiServer(step, etcd, apiServer.port)).process;
  };
  return makeCluster({
    ...context,
    kubectl,
    apiServerUrl: apiServer.url,
    etcdUrl: etcd.url,
    pki,
    processes,
    startSeconds,
    restartApiServer,
  });
}

async function findBinaries(context: BootContext): Promise<Binaries> {
  const binaries = await ensureTools(LOCAL_CLUSTER_TOOLS, {
    ...(context.options.env ? { env: context.options.env } : {}),
    // Builds and waits are worth a line each; six "cached" lines are not.
    onProgress: (event) => {
      if (event.kind !== 'cached') context.progress.report('tools', event.message);
    },
  });
  context.progress.report('tools', `binaries ready (${cacheRoot(context.options.env)}/bin)`);
  return binaries;
}

function bootApiServer(step: Step, etcd: RunningEtcd, port?: number): Promise<RunningApiServer> {
  return step.progress.during(
    'kube-apiserver',
    'GET /readyz',
    startApiServer({
      group: step.group,
      binary: step.binaries['kube-apiserver'],
      env: step.env,
      pki: step.pki,
      etcdUrl: etcd.url,
      readyTimeoutMs: step.timeoutMs,
      ...(step.options.apiServerArgs ? { extraArgs: step.options.apiServerArgs } : {}),
      ...(port === undefined ? {} : { port }),
    }),
  );
}

/** The API server's clients start together: none waits for another. */
async function bootWorkers(
  step: Step,
  kubeconfigOf: (identity: Identity) => Promise<string>,
): Promise<Record<'kube-controller-manager' | 'kube-scheduler' | 'kwok', ManagedProcess>> {
  const { group, env, pki, progress, binaries } = step;
  const readyTimeoutMs = step.timeoutMs;
  const [controllerManager, scheduler, kwok] = await Promise.all([
    progress.during(
      'kube-controller-manager',
      'GET /healthz',
      kubeconfigOf('controllerManager').then((kubeconfig) =>
        startControllerManager({
          group,
          binary: binaries['kube-controller-manager'],
          env,
          pki,
          kubeconfig,
          readyTimeoutMs,
        }),
      ),
    ),
    progress.during(
      'kube-scheduler',
      'GET /healthz',
      kubeconfigOf('scheduler').then((kubeconfig) =>
        startScheduler({ group, binary: binaries['kube-scheduler'], env, pki, kubeconfig, readyTimeoutMs }),
      ),
    ),
    kubeconfigOf('kwok')
      .then((kubeconfig) => startKwok({ group, binary: binaries.kwok, env, kubeconfig }))
      .then((kwok) => {
        progress.report('kwok', `started (pid ${kwok.pid}); ready once its Nodes are`);
        return kwok;
      }),
  ]);
  return { 'kube-controller-manager': controllerManager, 'kube-scheduler': scheduler, kwok };
}

interface ClusterParts extends BootContext {
  readonly kubectl: Kubectl;
  readonly apiServerUrl: string;
  readonly etcdUrl: string;
  readonly pki: ClusterPki;
  readonly processes: Readonly<Record<ComponentName, ManagedProcess>>;
  readonly startSeconds: number;
  readonly restartApiServer: (whileDown?: () => Promise<void>) => Promise<void>;
}

function makeCluster(parts: ClusterParts): LocalCluster {
  const { kubectl, group, runDir } = parts;
  const keepByDefault = parts.options.keepRunDir ?? process.env.SIGNET_E2E_KEEP === '1';
  let stopping: Promise<void> | undefined;
  return {
    runDir,
    kubeconfig: kubectl.kubeconfig,
    apiServerUrl: parts.apiServerUrl,
    caPem: parts.pki.caPem,
    pki: parts.pki,
    etcdUrl: parts.etcdUrl,
    startSeconds: parts.startSeconds,
    processes: parts.processes,
    group,
    kubectl: (args, options) => kubectl.run(args, options),
    apply: (manifests) => kubectl.apply(manifests),
    getJson: (args) => kubectl.getJson(args),
    logTails: (lines) => group.logTails(lines),
    restartApiServer: parts.restartApiServer,
    stop: (options) => {
      stopping ??= (async () => {
        await stopInReverse(group);
        parts.reaper.dismiss();
        if (!(options?.keepRunDir ?? keepByDefault)) await rm(runDir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}

/**
 * Last started, first stopped: API clients before kube-apiserver before etcd. Stopped all at once,
 * kube-apiserver waits for the vanished etcd in its graceful shutdown and is only killed after the
 * grace period (5 s instead of about 1 s). `stopAll` then clears the group's bookkeeping.
 */
async function stopInReverse(group: ProcessGroup): Promise<void> {
  for (const managed of [...group.processes].reverse()) await managed.stop();
  await group.stopAll();
}
