import type { TestImages } from '../scenarios/test-images.js';
import type { WebhookUnderTest } from '../webhooks/webhook-under-test.js';
import type { TestCluster } from './test-cluster.js';

/** Signet, installed and registered, with the policies a scenario gave it loaded. */
export interface DeployedSignet extends WebhookUnderTest {
  stop(): Promise<void>;
}

export interface DeploySignetOptions {
  /** `host:port` of plain-HTTP registries the scenario's images live in. */
  readonly insecureRegistries: readonly string[];
  /** ClusterImagePolicy (and TrustRoot) objects to apply once the CRDs are installed. */
  readonly policies: readonly object[];
  /** Names of the ClusterImagePolicies Signet must have loaded before the scenario starts. */
  readonly policyNames: readonly string[];
  readonly onProgress?: (line: string) => void;
}

/**
 * Where scenarios run: a cluster, and a way to install Signet in it. `local` (the default) is the
 * control plane of host processes with Signet as a host process; `kind` is a kind cluster with
 * real nodes, Signet installed from its image and Helm chart (needs Docker, see README).
 */
export interface ClusterProvider {
  readonly name: 'local' | 'kind';
  startCluster(options?: { readonly onProgress?: (line: string) => void }): Promise<TestCluster>;
  /**
   * Pushes the test images (unsigned `app:v1`, signed `app:v2`) to a registry the cluster and
   * Signet reach: a loopback registry process, or kind's registry container (runnable images).
   */
  prepareTestImages(cluster: TestCluster, onProgress?: (line: string) => void): Promise<TestImages>;
  /** Installs Signet with its CRDs, applies the policies and resolves once Signet has loaded them. */
  deploySignet(cluster: TestCluster, options: DeploySignetOptions): Promise<DeployedSignet>;
}
