// E2E_PROVIDER=kind: a kind cluster with real nodes (see src/kind/): runnable test images in a
// registry container on the cluster's network, Signet built into its image and installed with
// its Helm chart, as users run it. Needs a Docker engine (see e2e/README.md).
import { type KindCluster, startKindCluster } from '../kind/kind-cluster.js';
import { prepareKindTestImages } from '../kind/kind-images.js';
import { deployKindSignet } from '../kind/kind-signet.js';
import type { ClusterProvider } from './provider.js';
import type { TestCluster } from './test-cluster.js';

export type { KindCluster } from '../kind/kind-cluster.js';

function asKindCluster(cluster: TestCluster): KindCluster {
  if (!('registry' in cluster) || !('kind' in cluster)) {
    throw new Error('the kind provider works only with a cluster it started');
  }
  return cluster as KindCluster;
}

export const kindProvider: ClusterProvider = {
  name: 'kind',
  startCluster: (options = {}) =>
    startKindCluster(options.onProgress ? { onProgress: options.onProgress } : {}),
  prepareTestImages: (cluster, onProgress) =>
    prepareKindTestImages(asKindCluster(cluster), onProgress ? { onProgress } : {}),
  deploySignet: (cluster, options) => deployKindSignet(asKindCluster(cluster), options),
};
