// The local control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok
// as host processes on loopback, for scenarios that need the real API server and controllers.
export { ClusterError, type ClusterErrorCode } from './errors.js';
export {
  Kubectl,
  type KubectlResult,
  type KubectlRunOptions,
  type Manifests,
  manifestText,
} from './kubectl.js';
export {
  type ComponentName,
  LOCAL_CLUSTER_TOOLS,
  type LocalCluster,
  type LocalClusterOptions,
  startLocalCluster,
} from './local-cluster.js';
export { IDENTITIES, type Identity } from './pki.js';
export type { ClusterProgress, ProgressListener } from './progress.js';
