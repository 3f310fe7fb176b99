import { ImageVerifier, RegistryClient, VerificationCache } from '@signet/verifier';
import { AdmissionService } from '../admission-service.js';
import { createAdmissionApp } from '../http/admission-app.js';
import { createOpsApp } from '../http/ops-app.js';
import type { ClusterPolicySource } from '../kube/cluster-source.js';
import type { PolicyEventRecorder } from '../kube/events.js';
import type { SelfManagedTls } from '../kube/self-managed-tls.js';
import { createLogger, type Logger } from '../logger.js';
import { SignetMetrics } from '../metrics.js';
import { loadPolicyFile } from '../policy/policy-file.js';
import { mergePolicyObjects, type PolicyObjects } from '../policy/policy-objects.js';
import { compileSnapshot, PolicyStore } from '../policy/policy-store.js';
import { type RunningServers, startServers } from '../server.js';
import { type CertificatePair, CertificateWatcher, readCertificatePair } from '../tls.js';
import type { ServeConfig } from './serve-config.js';

export { SERVE_OPTIONS, serveConfigFrom } from './serve-config.js';

/**
 * The Kubernetes side (client, watches, Events, pull secrets, self-managed TLS), loaded only when
 * policies come from a cluster: `@kubernetes/client-node` alone costs about 90 MB of memory, which
 * `--policy-file` deployments do not pay.
 */
async function loadKube(path: string | undefined) {
  const [client, source, events, pullSecrets, tls] = await Promise.all([
    import('@kubernetes/client-node'),
    import('../kube/cluster-source.js'),
    import('../kube/events.js'),
    import('../kube/pull-secrets.js'),
    import('../kube/self-managed-tls.js'),
  ]);
  const kubeConfig = new client.KubeConfig();
  if (path !== undefined) kubeConfig.loadFromFile(path);
  else kubeConfig.loadFromDefault();
  return { kubeConfig, ...source, ...events, ...pullSecrets, ...tls };
}

const POLICY_API_VERSION = 'policy.sigstore.dev/v1beta1';

/**
 * Compiles each new view of the policy objects and installs it; reports problems in the log and,
 * on a cluster, as Events on the object.
 */
function policyApplier(
  config: ServeConfig,
  store: PolicyStore,
  logger: Logger,
  metrics: SignetMetrics,
  events: PolicyEventRecorder | undefined,
) {
  return async (objects: PolicyObjects): Promise<void> => {
    const version = store.begin();
    const { snapshot, problems } = await compileSnapshot(objects, { namespace: config.namespace, logger });
    for (const problem of problems) {
      logger.error({ object: problem.object, err: problem.cause }, `policy problem: ${problem.message}`);
      const [kind, name] = problem.object.split('/');
      if (events && name && (kind === 'ClusterImagePolicy' || kind === 'TrustRoot')) {
        const apiVersion = kind === 'TrustRoot' ? 'policy.sigstore.dev/v1alpha1' : POLICY_API_VERSION;
        void events.warn({ apiVersion, kind, name }, 'InvalidPolicy', problem.message);
      }
    }
    if (snapshot === undefined) {
      logger.error(
        store.current
          ? 'the new policies cannot be used; keeping the previous ones'
          : 'no usable policies yet; not ready',
      );
      return;
    }
    if (store.install(version, snapshot)) {
      metrics.policies.set({ state: 'active' }, snapshot.set.policies.length - snapshot.broken.size);
      metrics.policies.set({ state: 'invalid' }, snapshot.broken.size);
      logger.info(
        {
          policies: snapshot.set.policies.map((p) => p.name),
          broken: [...snapshot.broken.keys()],
          noMatchPolicy: snapshot.config.noMatchPolicy,
        },
        'policies loaded',
      );
    }
  };
}

/** Runs the webhook until SIGTERM or SIGINT, then finishes in-flight reviews and exits 0. */
export async function runServe(config: ServeConfig): Promise<number> {
  const logger = createLogger({ level: config.logLevel });
  const metrics = new SignetMetrics();
  const store = new PolicyStore();
  const kube = config.policyFiles.length === 0 ? await loadKube(config.kubeconfig) : undefined;
  const events: PolicyEventRecorder | undefined = kube
    ? new kube.PolicyEventRecorder(kube.kubeConfig, logger)
    : undefined;
  const apply = policyApplier(config, store, logger, metrics, events);
  const verifier = new ImageVerifier({
    registry: new RegistryClient({ insecureHosts: config.insecureRegistries }),
    cache: new VerificationCache({ ttlMs: config.cacheTtlMs }),
    onCache: (result) => metrics.cacheLookups.inc({ result }),
    onRegistryError: (error) => metrics.registryErrors.inc({ class: error.code.toLowerCase() }),
  });
  const service = new AdmissionService({
    store,
    verifier,
    logger,
    metrics,
    resolveDigests: config.resolveDigests,
    ...(kube ? { pullSecrets: new kube.KubePullSecretLookup(kube.kubeConfig) } : {}),
  });

  let servers: RunningServers | undefined;
  const onCertificate = (pair: CertificatePair) => servers?.setCertificate(pair);
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
      kubeConfig: kube.kubeConfig,
      logger,
      namespace: config.namespace,
      secretName: config.tls.secretName,
      serviceName: config.tls.serviceName,
      webhookName: config.webhookName,
      onCertificate,
    });
    certificate = await selfManaged.start();
  }

  servers = await startServers({
    admissionApp: createAdmissionApp({ handler: service.handle, logger, metrics }),
    opsApp: createOpsApp(metrics, {
      ready: () => (store.current ? { ready: true } : { ready: false, reason: 'policies not loaded yet' }),
    }),
    certificate,
    port: config.port,
    opsPort: config.opsPort,
    host: config.host,
    opsHost: config.opsHost,
    logger,
  });

  let source: ClusterPolicySource | undefined;
  if (kube === undefined) {
    await apply(
      mergePolicyObjects(
        await Promise.all(config.policyFiles.map((f) => loadPolicyFile(f, config.namespace))),
      ),
    );
  } else {
    source = new kube.ClusterPolicySource({
      kubeConfig: kube.kubeConfig,
      namespace: config.namespace,
      logger,
      onChange: (objects) => void apply(objects),
    });
    await source.start();
  }

  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      logger.info({ signal }, 'shutting down: finishing in-flight reviews');
      resolve();
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  watcher?.stop();
  selfManaged?.stop();
  await source?.stop();
  await servers.close(10_000);
  logger.info('stopped');
  return 0;
}
