// The composition root of `signet serve`: every part of a running Signet is made and connected
// here, once, then started in order and stopped in reverse by one Lifecycle (ADR 0023). Policies
// come from files or from the cluster; with a cluster, one leader elector runs the parts only one
// replica may run (policy status, the background scan, the verification records' collection).
import { hostname } from 'node:os';
import { SIGNATURE_FORMATS } from '@signet/verifier';
import { type Admission, assembleAdmission } from './admission/assemble-admission.js';
import type { ScannerSetup } from './audit/start-scanner.js';
import type { ServeConfig } from './config.js';
import type { ClusterPolicySourceOptions } from './kube/cluster-source.js';
import type { NamespacedStatusWriterOptions } from './kube/namespaced-status-writer.js';
import type { SelfManagedTlsOptions } from './kube/self-managed-tls.js';
import type { StatusWriterOptions } from './kube/status-writer.js';
import { LeaderElector, replicaIdentity } from './lifecycle/leader-elector.js';
import { Lifecycle } from './lifecycle/lifecycle.js';
import type { Election, Part } from './lifecycle/part.js';
import { createLoggers, type Logger } from './logger.js';
import { SignetMetrics } from './metrics.js';
import { remotePolicies } from './outbound.js';
import { ComputePools } from './policy/compute-pools.js';
import { policyApplier, RETRY_BROKEN_MS } from './policy/policy-applier.js';
import { readPolicyFiles } from './policy/policy-file.js';
import { PolicyIntake } from './policy/policy-intake.js';
import type { PolicyObjects } from './policy/policy-objects.js';
import type { CompileOptions, PolicySnapshot } from './policy/policy-store.js';
import { policyValidator } from './policy/policy-validation.js';
import { createRefreshedInputs, type RefreshedInputs, refreshing } from './policy/refreshed-inputs.js';
import { loadHttpLayer, Ports } from './ports.js';
import type { ClientAuth, RunningServers } from './server.js';
import {
  type CertificatePair,
  CertificateWatcher,
  ClientCaWatcher,
  readCertificatePair,
  readClientCa,
} from './tls.js';
import { version } from './version.js';
import { healthzUrl, WarmUp } from './warm-up.js';

/** Parts a test may provide instead of the defaults. */
export interface SignetOverrides {
  readonly logger?: Logger;
  readonly metrics?: SignetMetrics;
}

export interface RunningSignet extends Admission {
  readonly logger: Logger;
  readonly metrics: SignetMetrics;
  readonly servers: RunningServers;
  /** The parts, in the order they started (they stop in reverse). */
  readonly parts: readonly string[];
  /**
   * A graceful exit, as on SIGTERM: readiness turns false at once, reviews are still answered for
   * the drain period (each answer closing its connection, so the API server reconnects through the
   * Service to a ready replica), then the servers stop accepting and in-flight reviews finish.
   */
  shutdown(): Promise<void>;
  /** Stops every part now, letting in-flight reviews finish (up to `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/** Starts Signet as `config` says: servers listening, policies loaded (from files) or watched. */
export async function startSignet(
  config: ServeConfig,
  overrides: SignetOverrides = {},
): Promise<RunningSignet> {
  // Loaded while the rest starts (policy files, the cluster client), awaited before listening.
  const http = loadHttpLayer();
  http.catch(() => undefined);
  const loggers = overrides.logger
    ? { logger: overrides.logger, admissions: overrides.logger }
    : createLoggers({ level: config.logLevel });
  const { logger } = loggers;
  const metrics = overrides.metrics ?? new SignetMetrics({ build: buildInfo(version(), process.env) });
  const kube = config.policyFiles.length === 0 ? await loadKube(config, logger, metrics) : undefined;
  // Policy files are read (and refused when unusable) before anything listens; so is the client
  // CA: a file that holds no certificate stops the start, not every caller later.
  const files = kube ? undefined : await readPolicyFiles(config.policyFiles, config.namespace);
  const clientAuth = clientAuthOf(config);
  // Verification records (issue 24, ADR 0022): passes shared by replicas and restarts, and
  // stale-if-error; with `--verification-records` only.
  const records = kube?.records?.({ policies: () => admission.store.current });
  const admission = assembleAdmission({
    logger,
    metrics,
    insecureRegistries: config.insecureRegistries,
    registries: config.registries,
    cacheTtlMs: config.cacheTtlMs,
    resolveDigests: config.resolveDigests,
    allowUnpinnedTags: config.allowUnpinnedTags,
    ...(kube
      ? {
          pullSecrets: kube.pullSecrets,
          onExceptionUses: (request, uses) => kube.exceptionEvents.record(request, uses),
        }
      : {}),
    ...(records ? { records: { passes: records.passes, grace: records.grace } } : {}),
  });
  const pools = new ComputePools({ logger, validationConcurrency: config.policyValidationConcurrency });
  const inputs = await createRefreshedInputs(config, logger, metrics);
  const compile = compileOptions(config, pools, inputs);

  const policies = policyParts({ config, kube, files, admission, compile, pools, inputs, logger, metrics });
  const certificate = servingCertificate(config, kube, logger, (pair) => ports.setCertificate(pair));
  const ports = new Ports({
    http,
    admission,
    policyHandler: policyValidator({
      view: policies.view,
      compile,
      capacity: pools.capacity,
      readsInputsByReference: kube !== undefined,
    }),
    certificate,
    clientAuth,
    config,
    logger,
    admissionLog: loggers.admissions,
    metrics,
  });
  const lifecycle = new Lifecycle(
    [
      pools,
      refreshing(inputs, () => policies.intake.recompile()),
      certificate,
      // Before the ports: stopped after them, so the passes of the last reviews are still written.
      ...(records ? [records] : []),
      ports,
      ...(clientAuth ? [clientCaWatch(clientAuth, logger, (ca) => ports.setClientCa(ca))] : []),
      ...policies.parts,
      ...(records ? [records.collector] : []),
      new WarmUp({
        ready: () => admission.store.current !== undefined,
        healthz: () => healthzUrl(config.opsHost, ports.servers.opsPort),
        logger,
      }),
    ],
    { logger, elector: kube?.elector },
  );
  await lifecycle.start();

  const stop = async (graceMs = 10_000) => {
    ports.notReady();
    await lifecycle.stop(graceMs);
  };
  return {
    ...admission,
    logger,
    metrics,
    servers: ports.servers,
    parts: lifecycle.names,
    async shutdown() {
      ports.drain();
      logger.info(
        { drainMs: config.shutdownDrainMs },
        'shutting down: not ready, still answering while endpoints update',
      );
      await new Promise((resolve) => setTimeout(resolve, config.shutdownDrainMs));
      logger.info('shutting down: finishing in-flight reviews');
      await stop(config.shutdownGraceMs);
    },
    stop,
  };
}

/** `signet_build_info`'s labels: the package version, and the image's revision when it says one. */
function buildInfo(version: string, env: NodeJS.ProcessEnv): { version: string; revision: string } {
  const revision = env.SIGNET_REVISION ?? '';
  return { version, revision: /^[0-9A-Za-z._-]{1,64}$/.test(revision) ? revision : 'unknown' };
}

/** What every policy compile of the server is given. */
function compileOptions(config: ServeConfig, pools: ComputePools, inputs: RefreshedInputs): CompileOptions {
  return {
    namespace: config.namespace,
    maxExceptionLifetimeMs: config.exceptionMaxLifetimeMs,
    formats: SIGNATURE_FORMATS.withDefaults(config.signatureFormatDefault),
    cel: pools.cel,
    fetchRemotePolicy: remotePolicies(config.registries, { retryAfterMs: RETRY_BROKEN_MS / 2 }),
    kmsKeys: inputs.kmsKeys,
    remoteRoots: inputs.remoteRoots,
    ...(inputs.defaultRoot ? { defaultRoot: inputs.defaultRoot } : {}),
  };
}

interface PolicySide {
  readonly config: ServeConfig;
  readonly kube: Kube | undefined;
  readonly files: PolicyObjects | undefined;
  readonly admission: Admission;
  readonly compile: CompileOptions;
  readonly pools: ComputePools;
  readonly inputs: RefreshedInputs;
  readonly logger: Logger;
  readonly metrics: SignetMetrics;
}

/**
 * Where policies come from and what follows from them: the files, installed once the ports are
 * open; or the cluster's watches, each change compiled and installed, with the leader-only parts
 * that write back to the cluster (policy status, the background scan). `view` is what
 * `/validate-policy` checks a policy against: the objects as last seen, once policies are loaded.
 */
function policyParts(side: PolicySide) {
  const { config, kube, admission } = side;
  const election = statusElection(config);
  const statusWriter = kube?.statusWriter({ objects: () => source?.policyObjects() ?? [], election });
  // The namespaces' ImagePolicies and exceptions: on the same Lease, in a part of their own.
  const namespacedStatus = kube?.namespacedStatusWriter({
    objects: () => source?.namespacedObjects() ?? [],
    election,
  });
  const writers = [...(statusWriter ? [statusWriter] : []), ...(namespacedStatus ? [namespacedStatus] : [])];
  const scanner = kube?.scanner?.({
    store: admission.store,
    service: admission.service,
    config: config.audit,
  });
  const intake = new PolicyIntake({
    apply: policyApplier({
      store: admission.store,
      compile: side.compile,
      logger: side.logger,
      metrics: side.metrics,
      engines: side.pools.engines,
      ...(kube ? { events: kube.events } : {}),
      ...(writers.length > 0
        ? {
            onInstalled: (snapshot) => {
              for (const writer of writers) writer.installed(snapshot);
            },
          }
        : {}),
    }),
    // Remote roots (and cache entries) of TrustRoots that are gone are dropped.
    onView: (objects) => void side.inputs.retain(objects.trustRoots),
    onApplied: () => scanner?.policiesChanged(),
  });
  const source = kube?.source({
    onChange: (objects) => void intake.accept(objects),
    onObjects: () => {
      for (const writer of writers) writer.reconcile();
    },
  });
  const { files } = side;
  if (source === undefined) {
    if (files === undefined) throw new Error('policies come from neither files nor a cluster');
    const installed: Part = { name: 'policy files', start: () => intake.accept(files), stop: () => {} };
    return { intake, parts: [installed], view: () => files };
  }
  return {
    intake,
    parts: [source, ...writers, ...(scanner ? [scanner] : [])],
    view: () => (admission.store.current ? source.snapshot() : undefined),
  };
}

/** The policy status Lease: its holder writes policy status and collects verification records. */
function statusElection(config: ServeConfig): Election {
  return { lease: `${config.webhookName}-policy-status`, durationMs: 15_000 };
}

/** The serving certificate: from files (reloaded when they change), or kept in the cluster. */
function servingCertificate(
  config: ServeConfig,
  kube: Kube | undefined,
  logger: Logger,
  onCertificate: (pair: CertificatePair) => void,
): Part & { readonly current: CertificatePair } {
  const tls = config.tls;
  if (tls.mode === 'files') {
    const pair = readCertificatePair(tls.certFile, tls.keyFile);
    const files = { certFile: tls.certFile, keyFile: tls.keyFile };
    return new CertificateWatcher({ ...files, logger, onChange: onCertificate }, pair);
  }
  if (kube === undefined) throw new Error('self-managed TLS needs a cluster');
  return kube.selfManagedTls({ secretName: tls.secretName, serviceName: tls.serviceName, onCertificate });
}

/** `--client-ca-file`, read and checked: the admission port's mutual TLS, or none. */
function clientAuthOf(config: ServeConfig): (ClientAuth & { readonly file: string }) | undefined {
  if (config.clientAuth === undefined) return undefined;
  const { caFile, required } = config.clientAuth;
  return { ca: readClientCa(caFile), required, file: caFile };
}

/** Takes a changed client CA file without a restart (a mounted ConfigMap or Secret updates in place). */
function clientCaWatch(
  clientAuth: ClientAuth & { readonly file: string },
  logger: Logger,
  onChange: (ca: string) => void,
): ClientCaWatcher {
  return new ClientCaWatcher({ file: clientAuth.file, logger, onChange }, clientAuth.ca);
}

type Kube = Awaited<ReturnType<typeof loadKube>>;

/**
 * The Kubernetes side, loaded only when policies come from a cluster: the client, the policy
 * watches, Events (on policies, and on what an exception let in), pull secrets, self-managed TLS,
 * and the leader elector with the parts it runs (policy status, of ClusterImagePolicies and of
 * the namespaces' objects; the background scan, loaded only when it is on); and the verification
 * records, loaded only with `--verification-records`.
 */
async function loadKube(config: ServeConfig, logger: Logger, metrics: SignetMetrics) {
  const [
    connection,
    watches,
    events,
    pullSecrets,
    tls,
    lease,
    status,
    namespaced,
    exceptions,
    audit,
    records,
  ] = await Promise.all([
    import('./kube/kube-api.js'),
    import('./kube/cluster-source.js'),
    import('./kube/events.js'),
    import('./kube/pull-secret-lookup.js'),
    import('./kube/self-managed-tls.js'),
    import('./kube/leader-lease.js'),
    import('./kube/status-writer.js'),
    import('./kube/namespaced-status-writer.js'),
    import('./kube/exception-events.js'),
    config.audit.intervalMs > 0 ? import('./audit/start-scanner.js') : undefined,
    config.records.enabled ? import('./records/verification-records.js') : undefined,
  ]);
  const api = connection.openKubeApi({ kubeconfig: config.kubeconfig, context: config.context });
  const { namespace, webhookName } = config;
  const cluster = { api, logger, namespace };
  return {
    pullSecrets: new pullSecrets.KubePullSecretLookup(api),
    events: new events.PolicyEventRecorder(api, logger),
    exceptionEvents: new exceptions.ExceptionEvents({ api, logger }),
    elector: new LeaderElector({
      identity: replicaIdentity(config.leaderIdentity),
      logger,
      openLease: (request) => new lease.LeaderLease({ ...cluster, ...request }),
    }),
    source: (options: Omit<ClusterPolicySourceOptions, keyof typeof cluster>) =>
      new watches.ClusterPolicySource({ ...cluster, ...options }),
    statusWriter: (options: Omit<StatusWriterOptions, 'api' | 'logger' | 'metrics'>) =>
      new status.PolicyStatusWriter({ api, logger, metrics, ...options }),
    namespacedStatusWriter: (options: Omit<NamespacedStatusWriterOptions, 'api' | 'logger' | 'metrics'>) =>
      new namespaced.NamespacedStatusWriter({ api, logger, metrics, ...options }),
    scanner: audit
      ? (options: Omit<ScannerSetup, keyof typeof cluster | 'metrics'>) =>
          audit.createBackgroundScanner({ ...cluster, metrics, ...options })
      : undefined,
    selfManagedTls: (options: Pick<SelfManagedTlsOptions, 'secretName' | 'serviceName' | 'onCertificate'>) =>
      new tls.SelfManagedTls({ ...cluster, webhookName, ...options }),
    records: records
      ? (options: { readonly policies: () => PolicySnapshot | undefined }) =>
          new records.VerificationRecords({
            ...cluster,
            metrics,
            keySecret: config.records.keySecret,
            replica: config.leaderIdentity ?? hostname(),
            cacheTtlMs: config.cacheTtlMs,
            staleIfErrorMs: config.records.staleIfErrorMs,
            maxRecords: config.records.maxRecords,
            election: statusElection(config),
            ...options,
          })
      : undefined,
  };
}
