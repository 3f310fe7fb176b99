import type { LocalCluster } from '../cluster/index.js';

/**
 * What a scenario needs from a cluster, whoever runs it: the local control plane (`local`) or a
 * kind cluster (`kind`). `LocalCluster` is one.
 */
export type TestCluster = Pick<
  LocalCluster,
  'runDir' | 'kubeconfig' | 'group' | 'kubectl' | 'apply' | 'getJson' | 'logTails' | 'stop'
>;
