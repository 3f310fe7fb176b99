// The common start of every Signet scenario: a cluster, the test images, Signet's CRDs and a keyed
// ClusterImagePolicy in the cluster, and Signet running against it.
import { readFile } from 'node:fs/promises';
import type { LocalCluster } from '../cluster/index.js';
import { deployLocalSignet, localProvider } from '../providers/local.js';
import type { ClusterProvider, DeployedSignet } from '../providers/provider.js';
import type { TestCluster } from '../providers/test-cluster.js';
import type { SignetWebhook } from '../signet-webhook.js';
import { keyPolicy } from './policies.js';
import type { TestImages } from './test-images.js';

/** The policy every Signet scenario starts with: `<registry>/app` (any tag or digest) must be signed by the test key. */
export const KEY_POLICY = 'signed-by-test-key';

export interface SignetEnvironment<
  C extends TestCluster = LocalCluster,
  S extends DeployedSignet = SignetWebhook,
> {
  readonly cluster: C;
  readonly images: TestImages;
  readonly signet: S;
  /** PEM of the test key's public half (`key.data` of the policies). */
  readonly publicKeyPem: string;
}

/** More for Signet to know about from its start: registries it reaches over plain HTTP, policies. */
export interface Preparation {
  readonly insecureRegistries: readonly string[];
  /** ClusterImagePolicy and TrustRoot objects, applied once the CRDs are installed. */
  readonly policies: readonly object[];
  /** The ClusterImagePolicies among them that Signet must have loaded (usable) before scenarios run. */
  readonly policyNames: readonly string[];
}

export interface SignetEnvironmentOptions<C extends TestCluster = TestCluster> {
  /**
   * Runs before Signet is deployed (cluster and test images are there): start more registries,
   * push and sign images; returns what Signet must know about.
   */
  readonly prepare?: (environment: Omit<SignetEnvironment<C, never>, 'signet'>) => Promise<Preparation>;
  readonly onProgress?: (line: string) => void;
}

/** The local control plane and Signet as a host process (`LocalCluster`, `SignetWebhook`). */
export function startSignetEnvironment(
  options: SignetEnvironmentOptions<LocalCluster> = {},
): Promise<SignetEnvironment<LocalCluster, SignetWebhook>> {
  return startEnvironment(
    () =>
      localProvider.startCluster(
        options.onProgress ? { onProgress: options.onProgress } : {},
      ) as Promise<LocalCluster>,
    deployLocalSignet,
    localProvider.prepareTestImages,
    options,
  );
}

/** The same on any provider (`E2E_PROVIDER`): for scenarios that need nothing but kubectl and the admission log. */
export function startProviderEnvironment(
  provider: ClusterProvider,
  options: SignetEnvironmentOptions = {},
): Promise<SignetEnvironment<TestCluster, DeployedSignet>> {
  return startEnvironment(
    () => provider.startCluster(options.onProgress ? { onProgress: options.onProgress } : {}),
    (cluster, deploy) => provider.deploySignet(cluster, deploy),
    (cluster, onProgress) => provider.prepareTestImages(cluster, onProgress),
    options,
  );
}

/**
 * Starts the cluster, pushes and signs the test images, installs Signet with the keyed policy (and
 * whatever `prepare` adds), and waits until Signet has loaded the policies. On failure, stops what
 * it started (keeping the run directory) and rethrows with the logs' tails.
 */
async function startEnvironment<C extends TestCluster, S extends DeployedSignet>(
  startCluster: () => Promise<C>,
  deploy: (cluster: C, options: Parameters<ClusterProvider['deploySignet']>[1]) => Promise<S>,
  prepareImages: ClusterProvider['prepareTestImages'],
  options: SignetEnvironmentOptions<C>,
): Promise<SignetEnvironment<C, S>> {
  const report = options.onProgress ?? (() => {});
  const cluster = await startCluster();
  try {
    const images = await prepareImages(cluster, (message) => report(`images: ${message}`));
    const publicKeyPem = await readFile(images.key.publicKey, 'utf8');
    const more = (await options.prepare?.({ cluster, images, publicKeyPem })) ?? {
      insecureRegistries: [],
      policies: [],
      policyNames: [],
    };
    const policy = keyPolicy({ name: KEY_POLICY, images: [`${images.registry.host}/app*`], publicKeyPem });
    const signet = await deploy(cluster, {
      insecureRegistries: [images.registry.host, ...more.insecureRegistries],
      policies: [policy, ...more.policies],
      policyNames: [KEY_POLICY, ...more.policyNames],
      onProgress: report,
    });
    return { cluster, images, signet, publicKeyPem };
  } catch (error) {
    const tails = await cluster.logTails(15);
    await cluster.stop({ keepRunDir: true });
    throw new Error(`${(error as Error).message}\nrun directory ${cluster.runDir}\n${tails}`, {
      cause: error,
    });
  }
}
