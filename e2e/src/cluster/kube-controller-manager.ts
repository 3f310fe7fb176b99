import { freePort, type ManagedProcess, type ProcessGroup } from '@signet/testbed';
import type { ClusterPki } from './pki.js';

/**
 * The controllers the scenarios need, nothing that wants a cloud, volumes or CSRs:
 * workloads (Deployment ... ReplicationController), namespaces (deletion), ServiceAccounts and
 * their legacy tokens, the garbage collector (cascading deletes through ownerReferences), the
 * kube-root-ca.crt publisher, node lifecycle, which lifts the `node.kubernetes.io/not-ready`
 * taint that the TaintNodesByCondition admission plugin puts on every new Node once kwok reports it
 * Ready, and ClusterRole aggregation (the chart's roles joining the built-in edit, admin and view).
 */
export const CONTROLLERS = [
  'deployment-controller',
  'replicaset-controller',
  'statefulset-controller',
  'daemonset-controller',
  'job-controller',
  'cronjob-controller',
  'replicationcontroller-controller',
  'namespace-controller',
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  'garbage-collector-controller',
  'root-ca-certificate-publisher-controller',
  'node-lifecycle-controller',
  'pod-garbage-collector-controller',
  'clusterrole-aggregation-controller',
] as const;

export interface ControllerManagerOptions {
  readonly group: ProcessGroup;
  readonly binary: string;
  readonly env: NodeJS.ProcessEnv;
  readonly pki: ClusterPki;
  readonly kubeconfig: string;
  readonly readyTimeoutMs?: number;
}

export function controllerManagerArgs(options: ControllerManagerOptions, port: number): string[] {
  return [
    `--kubeconfig=${options.kubeconfig}`,
    // Each controller uses its own ServiceAccount (kube-system/deployment-controller, ...), so
    // webhooks see `system:serviceaccount:kube-system:deployment-controller` as in a real cluster.
    '--use-service-account-credentials=true',
    `--service-account-private-key-file=${options.pki.serviceAccountKeyFile}`,
    `--root-ca-file=${options.pki.caFile}`,
    `--controllers=${CONTROLLERS.join(',')}`,
    // One instance: leader election would only add a lease round-trip before anything starts.
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--tls-cert-file=${options.pki.servingCertFile}`,
    `--tls-private-key-file=${options.pki.servingKeyFile}`,
    '--profiling=false',
    // Level 2 logs each controller's sync errors and scaling decisions: what a failing scenario
    // needs (about 40 KB per run).
    '--v=2',
  ];
}

/** kube-controller-manager; ready when its `/healthz` answers 200 (checked with the cluster CA). */
export async function startControllerManager(options: ControllerManagerOptions): Promise<ManagedProcess> {
  const port = await freePort();
  return options.group.start({
    name: 'kube-controller-manager',
    command: options.binary,
    args: controllerManagerArgs(options, port),
    env: options.env,
    ready: { kind: 'http', url: `https://127.0.0.1:${port}/healthz`, ca: options.pki.caPem },
    readyTimeoutMs: options.readyTimeoutMs ?? 60_000,
  });
}
