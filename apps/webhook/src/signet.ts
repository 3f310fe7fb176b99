// The composition root: every part of a running Signet is made and connected here, once, for
// `signet serve`, `signet verify` and the tests alike.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import {
  CelWorkers,
  type CredentialSource,
  createCloudProviders,
  type FetchFunction,
  ImageVerifier,
  type PassRecords,
  RegistryClient,
  type RegistryError,
  VerificationCache,
} from '@signet/verifier';
import { AdmissionService } from './admission/admission-service.js';
import type { PullSecretLookup } from './admission/credentials.js';
import type { GraceRecords } from './admission/grace.js';
import type { ServeConfig } from './commands/serve-config.js';
import { ReviewTimeout } from './http/review.js';
import type { ClusterPolicySource } from './kube/cluster-source.js';
import type { KubeApi } from './kube/kube-api.js';
import type { KubeAccessOptions } from './kube/kube-config.js';
import type { LeaderLease } from './kube/leader-lease.js';
import type { SelfManagedTls } from './kube/self-managed-tls.js';
import { createLoggers, type Logger } from './logger.js';
import { SignetMetrics } from './metrics.js';
import { remotePolicies } from './outbound.js';
import { type PolicyProblemReporter, policyApplier, RETRY_BROKEN_MS } from './policy/policy-applier.js';
import { WebhookPolicyEngines } from './policy/policy-engines.js';
import { loadPolicyFile, requireUsablePolicyFiles } from './policy/policy-file.js';
import { mergePolicyObjects, type PolicyObjects } from './policy/policy-objects.js';
import { type PolicySnapshot, PolicyStore } from './policy/policy-store.js';
import { policyValidator } from './policy/policy-validation.js';
import { createRefreshedInputs } from './policy/refreshed-inputs.js';
import { ValidationCapacity } from './policy/validation-capacity.js';
import type { RegistrySettings } from './registry-settings.js';
import { type ClientAuth, type RunningServers, startServers } from './server.js';
import {
  type CertificatePair,
  CertificateWatcher,
  ClientCaWatcher,
  certificateExpirySeconds,
  readCertificatePair,
  readClientCa,
} from './tls.js';
import { version } from './version.js';

/** What admission needs, without servers: `signet serve` puts it behind HTTPS, `signet verify` calls it. */
export interface Admission {
  readonly store: PolicyStore;
  readonly verifier: ImageVerifier;
  readonly service: AdmissionService;
}

export interface AdmissionSettings {
  readonly logger: Logger;
  readonly metrics: SignetMetrics;
  readonly insecureRegistries: readonly string[];
  /** CA certificates and cloud credentials (insecure hosts come from `insecureRegistries`). */
  readonly registries?: Omit<RegistrySettings, 'insecureRegistries'>;
  /** Wraps the registry requests (`signet verify` reports slow ones). */
  readonly registryFetch?: FetchFunction;
  readonly cacheTtlMs?: number;
  readonly resolveDigests: boolean;
  readonly allowUnpinnedTags?: boolean;
  readonly pullSecrets?: PullSecretLookup;
  /** Credentials for every request when there are no pull secrets to read (`signet verify`). */
  readonly credentials?: CredentialSource;
  /** Told why a tag could not be pinned (`signet verify` prints it). */
  readonly onUnresolvedTag?: (image: string, error: unknown) => void;
  /** Verification records: passes shared with other replicas, and stale-if-error. */
  readonly records?: { readonly passes?: PassRecords; readonly grace?: GraceRecords } | undefined;
}

export function assembleAdmission(settings: AdmissionSettings): Admission {
  const { logger, metrics } = settings;
  const store = new PolicyStore();
  const verifier = new ImageVerifier({
    registry: new RegistryClient({
      insecureHosts: settings.insecureRegistries,
      privateHosts: settings.registries?.privateHosts ?? [],
      caCertificates: settings.registries?.caCertificates ?? [],
      credentialProviders: createCloudProviders(settings.registries?.cloudCredentials ?? []),
      ...(settings.registryFetch ? { fetch: settings.registryFetch } : {}),
    }),
    cache: new VerificationCache(settings.cacheTtlMs === undefined ? {} : { ttlMs: settings.cacheTtlMs }),
    onCache: (result) => metrics.cacheLookups.inc({ result }),
    onRegistryError: (error) => metrics.registryErrors.inc({ class: registryErrorClass(error) }),
    ...(settings.records?.passes ? { records: settings.records.passes } : {}),
  });
  const service = new AdmissionService({
    store,
    verifier,
    logger,
    metrics,
    resolveDigests: settings.resolveDigests,
    allowUnpinnedTags: settings.allowUnpinnedTags === true,
    ...(settings.pullSecrets ? { pullSecrets: settings.pullSecrets } : {}),
    ...(settings.credentials ? { credentials: settings.credentials } : {}),
    ...(settings.onUnresolvedTag ? { onUnresolvedTag: settings.onUnresolvedTag } : {}),
    ...(settings.records?.grace ? { grace: settings.records.grace } : {}),
  });
  return { store, verifier, service };
}

/**
 * The `class` label of a registry error: its code, except that a review's own deadline cutting a
 * call short is a timeout (the verifier sees it as its signal aborting), and any other abort (the
 * review was answered first) is `cancelled`. Codes are a closed set, so the label is bounded.
 */
export function registryErrorClass(error: RegistryError): string {
  if (error.code !== 'ABORTED') return error.code.toLowerCase();
  return error.cause instanceof ReviewTimeout ? 'timeout' : 'cancelled';
}

/** `signet_build_info`'s labels: the package version, and the image's revision when it says one. */
function buildInfo(version: string, env: NodeJS.ProcessEnv): { version: string; revision: string } {
  const revision = env.SIGNET_REVISION ?? '';
  return { version, revision: /^[0-9A-Za-z._-]{1,64}$/.test(revision) ? revision : 'unknown' };
}

/**
 * The Kubernetes side (client, watches, Events, pull secrets, self-managed TLS, status), loaded
 * only when policies come from a cluster.
 */
async function loadKube(access: KubeAccessOptions) {
  const [connection, source, events, pullSecrets, tls, lease, status] = await Promise.all([
    import('./kube/kube-api.js'),
    import('./kube/cluster-source.js'),
    import('./kube/events.js'),
    import('./kube/pull-secrets.js'),
    import('./kube/self-managed-tls.js'),
    import('./kube/leader-lease.js'),
    import('./kube/status-writer.js'),
  ]);
  const api = connection.openKubeApi(access);
  return { api, ...source, ...events, ...pullSecrets, ...tls, ...lease, ...status };
}

/**
 * The verification records part (`--verification-records`, cluster mode only; records/): loaded
 * only when asked for, started and stopped by `startSignet`.
 */
async function verificationRecords(
  api: KubeApi | undefined,
  config: ServeConfig,
  parts: {
    readonly logger: Logger;
    readonly metrics: SignetMetrics;
    readonly leading: () => boolean;
    readonly policies: () => PolicySnapshot | undefined;
  },
) {
  if (api === undefined || !config.records.enabled) return undefined;
  const { VerificationRecords } = await import('./records/verification-records.js');
  return new VerificationRecords({
    api,
    namespace: config.namespace,
    keySecret: config.records.keySecret,
    replica: process.env.POD_NAME || hostname(),
    cacheTtlMs: config.cacheTtlMs,
    staleIfErrorMs: config.records.staleIfErrorMs,
    maxRecords: config.records.maxRecords,
    ...parts,
  });
}

/** `--client-ca-file`, read and checked: the admission port's mutual TLS, or none. */
function clientAuthOf(config: ServeConfig): ClientAuth | undefined {
  if (config.clientAuth === undefined) return undefined;
  return { ca: readClientCa(config.clientAuth.caFile), required: config.clientAuth.required };
}

/** Takes a changed client CA file without a restart (a mounted ConfigMap or Secret updates in place). */
function watchClientCa(
  config: ServeConfig,
  clientAuth: ClientAuth | undefined,
  logger: Logger,
  onChange: (ca: string) => void,
): ClientCaWatcher | undefined {
  if (config.clientAuth === undefined || clientAuth === undefined) return undefined;
  const watcher = new ClientCaWatcher({ file: config.clientAuth.caFile, logger, onChange }, clientAuth.ca);
  watcher.start();
  return watcher;
}

/** The HTTP layer (express), loaded by `signet serve` only: `verify` and `audit` never pay for it. */
async function loadHttp() {
  const [admission, ops] = await Promise.all([
    import('./http/admission-app.js'),
    import('./http/ops-app.js'),
  ]);
  return { createAdmissionApp: admission.createAdmissionApp, createOpsApp: ops.createOpsApp };
}

async function loadPolicyFiles(config: ServeConfig): Promise<PolicyObjects> {
  const files = await Promise.all(config.policyFiles.map((f) => loadPolicyFile(f, config.namespace)));
  const objects = mergePolicyObjects(files);
  requireUsablePolicyFiles(objects);
  return objects;
}

/** Parts a test may provide instead of the defaults. */
export interface SignetOverrides {
  readonly logger?: Logger;
  readonly metrics?: SignetMetrics;
}

export interface RunningSignet extends Admission {
  readonly logger: Logger;
  readonly metrics: SignetMetrics;
  readonly servers: RunningServers;
  /**
   * A graceful exit, as on SIGTERM: readiness turns false at once, reviews are still answered for
   * the drain period (each answer closing its connection, so the API server reconnects through the
   * Service to a ready replica), then the servers stop accepting and in-flight reviews finish.
   */
  shutdown(): Promise<void>;
  /** Stops watches and servers now, letting in-flight reviews finish (up to `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/** Starts Signet as `config` says: servers listening, policies loaded (from files) or watched. */
export async function startSignet(
  config: ServeConfig,
  overrides: SignetOverrides = {},
): Promise<RunningSignet> {
  // Loaded while the rest starts (policy files, the cluster client), awaited before listening.
  const httpLayer = loadHttp();
  httpLayer.catch(() => undefined);
  const loggers = overrides.logger
    ? { logger: overrides.logger, admissions: overrides.logger }
    : createLoggers({ level: config.logLevel });
  const { logger } = loggers;
  const metrics = overrides.metrics ?? new SignetMetrics({ build: buildInfo(version(), process.env) });
  const kube =
    config.policyFiles.length === 0
      ? await loadKube({ kubeconfig: config.kubeconfig, context: config.context })
      : undefined;
  // Policy files are read (and refused when unusable) before anything listens.
  const fromFiles = kube === undefined ? await loadPolicyFiles(config) : undefined;
  // So is the client CA: a file that holds no certificate stops the start, not every caller later.
  const clientAuth = clientAuthOf(config);
  // Verification records (issue 24): passes shared by replicas and restarts, and stale-if-error.
  // One part: made here, started with the policy watch, stopped (its queue written) before it.
  let lease: LeaderLease | undefined;
  const records = await verificationRecords(kube?.api, config, {
    logger,
    metrics,
    leading: () => lease?.leading === true,
    policies: () => admission.store.current,
  });
  const admission = assembleAdmission({
    logger,
    metrics,
    insecureRegistries: config.insecureRegistries,
    registries: config.registries,
    cacheTtlMs: config.cacheTtlMs,
    resolveDigests: config.resolveDigests,
    allowUnpinnedTags: config.allowUnpinnedTags,
    ...(kube ? { pullSecrets: new kube.KubePullSecretLookup(kube.api) } : {}),
    records,
  });
  const { store } = admission;
  const events: PolicyProblemReporter | undefined = kube
    ? new kube.PolicyEventRecorder(kube.api, logger)
    : undefined;
  // Loaded on the first CUE or Rego policy only (ADR 0005).
  const engines = new WebhookPolicyEngines(logger);
  // CEL off the event loop, in worker threads started by the first CEL policy.
  const cel = new CelWorkers({
    onEvent: (event) =>
      event.type === 'started'
        ? logger.info({ startupMs: Math.round(event.startupMs) }, 'CEL worker started')
        : logger.warn({ reason: event.reason }, 'CEL worker stopped'),
  });
  // What `/validate-policy` may spend: engines and a CEL worker of its own (issue 21).
  const capacity = new ValidationCapacity({ logger, concurrency: config.policyValidationConcurrency });
  const inputs = await createRefreshedInputs(config, logger, metrics);
  const compile = {
    namespace: config.namespace,
    cel,
    fetchRemotePolicy: remotePolicies(config.registries, { retryAfterMs: RETRY_BROKEN_MS / 2 }),
    kmsKeys: inputs.kmsKeys,
    remoteRoots: inputs.remoteRoots,
    ...(inputs.defaultRoot ? { defaultRoot: inputs.defaultRoot } : {}),
  };
  let source: ClusterPolicySource | undefined;
  // Policy status on the cluster: written by the replica holding the Lease (ADR 0011).
  const statusWriter = kube
    ? new kube.PolicyStatusWriter({
        api: kube.api,
        logger,
        metrics,
        objects: () => source?.policyObjects() ?? [],
        leading: () => lease?.leading === true,
      })
    : undefined;
  if (kube) {
    lease = new kube.LeaderLease({
      api: kube.api,
      namespace: config.namespace,
      name: `${config.webhookName}-policy-status`,
      identity: `${process.env.POD_NAME || hostname()}_${randomBytes(4).toString('hex')}`,
      logger,
      onChange: (leading) => {
        metrics.statusLeader.set(leading ? 1 : 0);
        if (leading) statusWriter?.reconcile();
      },
    });
  }
  const applyObjects = policyApplier({
    store,
    compile,
    logger,
    metrics,
    engines,
    ...(events ? { events } : {}),
    ...(statusWriter ? { onInstalled: (snapshot) => statusWriter.installed(snapshot) } : {}),
  });
  let latest: PolicyObjects | undefined;
  const apply = (objects: PolicyObjects) => {
    latest = objects;
    // Remote roots (and cache entries) of TrustRoots that are gone are dropped.
    void inputs.retain(objects.trustRoots);
    return applyObjects(objects);
  };
  // A changed KMS key or trust root recompiles the policies last seen.
  const stopRefreshing = inputs.start(() => {
    if (latest !== undefined) void applyObjects(latest);
  });

  let servers: RunningServers | undefined;
  // The expiry metric is set where a certificate is put in the server (an expired one with
  // failurePolicy Fail blocks every covered write): here on rotation, and below at start.
  const servingCertificateExpiry = (pair: CertificatePair) =>
    metrics.servingCertificateExpiry.set(certificateExpirySeconds(pair.cert));
  const onCertificate = (pair: CertificatePair) => {
    if (servers === undefined) return;
    servers.setCertificate(pair);
    servingCertificateExpiry(pair);
  };
  let certificate: CertificatePair;
  let watcher: CertificateWatcher | undefined;
  let selfManaged: SelfManagedTls | undefined;
  if (config.tls.mode === 'files') {
    certificate = readCertificatePair(config.tls.certFile, config.tls.keyFile);
    watcher = new CertificateWatcher(
      { certFile: config.tls.certFile, keyFile: config.tls.keyFile, logger, onChange: onCertificate },
      certificate,
    );
    watcher.start();
  } else {
    if (kube === undefined) throw new Error('self-managed TLS needs a cluster');
    selfManaged = new kube.SelfManagedTls({
      api: kube.api,
      logger,
      namespace: config.namespace,
      secretName: config.tls.secretName,
      serviceName: config.tls.serviceName,
      webhookName: config.webhookName,
      onCertificate,
    });
    certificate = await selfManaged.start();
  }

  let shuttingDown = false;
  const readiness = () =>
    shuttingDown
      ? { ready: false, reason: 'shutting down' }
      : store.current
        ? { ready: true }
        : { ready: false, reason: 'policies not loaded yet' };
  metrics.reportReadiness(() => readiness().ready);
  const http = await httpLayer;
  const admissionApp = http.createAdmissionApp({
    handler: admission.service.review,
    quickHandler: admission.service.quick,
    policyHandler: policyValidator({
      view: () => (source ? (store.current ? source.snapshot() : undefined) : fromFiles),
      compile,
      capacity,
    }),
    logger,
    admissionLog: loggers.admissions,
    metrics,
    bodyLimitBytes: config.maxRequestBytes,
  });
  servingCertificateExpiry(certificate);
  const started = startServers({
    admissionApp: admissionApp.listener,
    opsApp: http.createOpsApp(metrics, { ready: readiness }),
    certificate,
    port: config.port,
    opsPort: config.opsPort,
    host: config.host,
    opsHost: config.opsHost,
    maxConnections: config.maxConnections,
    maxConnectionsPerSource: config.maxConnectionsPerSource,
    clientAuth,
    metrics,
    logger,
  });
  servers = await started.catch(async (error: unknown) => {
    stopRefreshing();
    watcher?.stop();
    selfManaged?.stop();
    await admissionApp.close();
    throw error;
  });
  const clientCaWatcher = watchClientCa(config, clientAuth, logger, (ca) => servers?.setClientCa(ca));

  // The background scan needs a cluster to read; with policy files there is none.
  const scanner =
    kube !== undefined && config.audit.intervalMs > 0
      ? (await import('./audit/start-scanner.js')).createBackgroundScanner({
          api: kube.api,
          admission,
          logger,
          metrics,
          config: config.audit,
          namespace: config.namespace,
        })
      : undefined;
  if (fromFiles !== undefined) {
    await apply(fromFiles);
  } else if (kube !== undefined) {
    source = new kube.ClusterPolicySource({
      api: kube.api,
      namespace: config.namespace,
      logger,
      onChange: (objects) => void apply(objects).then(() => scanner?.policiesChanged()),
      onObjects: () => statusWriter?.reconcile(),
    });
    await source.start();
    lease?.start();
    scanner?.start();
    records?.start();
  }

  const running = servers;
  const stop = async (graceMs = 10_000) => {
    shuttingDown = true;
    stopRefreshing();
    watcher?.stop();
    clientCaWatcher?.stop();
    selfManaged?.stop();
    await records?.stop();
    await source?.stop();
    await lease?.stop();
    await statusWriter?.idle();
    await scanner?.stop();
    await running.close(graceMs);
    await admissionApp.close();
    await Promise.all([engines.close(), cel.close(), capacity.close()]);
  };
  return {
    ...admission,
    logger,
    metrics,
    servers: running,
    async shutdown() {
      shuttingDown = true;
      // Every answer from now on closes its connection. Idle kept-alive connections are left
      // alone: closing one as the client reuses it fails that review (HTTP/1.1 has no way to
      // announce it), while the next answer on it closes it cleanly.
      admissionApp.drain();
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
