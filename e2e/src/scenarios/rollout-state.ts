import type { TestCluster } from '../providers/test-cluster.js';

/** One ReplicaSet of the Deployment, as the scenario sees it. */
export interface ReplicaSetState {
  readonly name: string;
  /** `spec.template.spec.containers[0].image` */
  readonly image: string;
  /** `spec.replicas`: what the deployment controller last managed to write. */
  readonly desired: number;
  /** Pods it owns that are not being deleted, and how many of them are Ready. */
  readonly pods: number;
  readonly readyPods: number;
}

/** The Deployment's status fields and what `kubectl get deploy` prints. */
export interface DeploymentState {
  readonly desired: number;
  /** `.status.replicas`: Pods of every ReplicaSet. */
  readonly replicas: number;
  readonly updatedReplicas: number;
  readonly readyReplicas: number;
  readonly availableReplicas: number;
  /** The rollout is done as `kubectl rollout status` defines it. */
  readonly complete: boolean;
  /** The READY column of `kubectl get deploy`, e.g. `3/2`. */
  readonly readyColumn: string;
  /** The whole `kubectl get deploy <name>` table. */
  readonly table: string;
}

export interface RolloutState {
  readonly deployment: DeploymentState;
  readonly replicaSets: readonly ReplicaSetState[];
}

interface Meta {
  readonly name: string;
  readonly uid: string;
  readonly generation?: number;
  readonly deletionTimestamp?: string;
  readonly ownerReferences?: readonly { readonly uid: string; readonly controller?: boolean }[];
}

interface DeploymentJson {
  readonly metadata: Meta;
  readonly spec: { readonly replicas?: number };
  readonly status?: {
    readonly observedGeneration?: number;
    readonly replicas?: number;
    readonly updatedReplicas?: number;
    readonly readyReplicas?: number;
    readonly availableReplicas?: number;
  };
}

interface ReplicaSetJson {
  readonly metadata: Meta;
  readonly spec: {
    readonly replicas?: number;
    readonly template: { readonly spec: { readonly containers: readonly { readonly image: string }[] } };
  };
}

interface PodJson {
  readonly metadata: Meta;
  readonly status?: { readonly conditions?: readonly { readonly type: string; readonly status: string }[] };
}

/** Reads the Deployment, its ReplicaSets and their Pods. */
export async function readRolloutState(
  cluster: TestCluster,
  namespace: string,
  name: string,
): Promise<RolloutState> {
  const [deployment, replicaSets, pods, table] = await Promise.all([
    cluster.getJson<DeploymentJson>(['deployment', name, '--namespace', namespace]),
    cluster.getJson<{ items: ReplicaSetJson[] }>(['replicasets', '--namespace', namespace]),
    cluster.getJson<{ items: PodJson[] }>(['pods', '--namespace', namespace]),
    cluster.kubectl(['get', 'deployment', name, '--namespace', namespace]),
  ]);
  const owned = replicaSets.items.filter((rs) => ownedBy(rs.metadata, deployment.metadata.uid));
  return {
    deployment: deploymentState(deployment, table.stdout),
    replicaSets: owned.map((rs) => replicaSetState(rs, pods.items)),
  };
}

function ownedBy(meta: Meta, ownerUid: string): boolean {
  return (meta.ownerReferences ?? []).some((owner) => owner.controller === true && owner.uid === ownerUid);
}

function deploymentState(deployment: DeploymentJson, table: string): DeploymentState {
  const desired = deployment.spec.replicas ?? 1;
  const status = deployment.status ?? {};
  const replicas = status.replicas ?? 0;
  const updatedReplicas = status.updatedReplicas ?? 0;
  const availableReplicas = status.availableReplicas ?? 0;
  const complete =
    (status.observedGeneration ?? 0) >= (deployment.metadata.generation ?? 0) &&
    updatedReplicas === desired &&
    replicas === desired &&
    availableReplicas === desired;
  return {
    desired,
    replicas,
    updatedReplicas,
    readyReplicas: status.readyReplicas ?? 0,
    availableReplicas,
    complete,
    readyColumn: readyColumn(table, deployment.metadata.name),
    table: table.trimEnd(),
  };
}

/** The READY cell of the row for `name` in `kubectl get deploy` output (`''` if absent). */
export function readyColumn(table: string, name: string): string {
  const lines = table.trim().split('\n');
  const header = lines[0]?.split(/\s+/) ?? [];
  const row = lines.find((line) => line.split(/\s+/)[0] === name)?.split(/\s+/) ?? [];
  return row[header.indexOf('READY')] ?? '';
}

function replicaSetState(rs: ReplicaSetJson, pods: readonly PodJson[]): ReplicaSetState {
  const mine = pods.filter(
    (pod) => !pod.metadata.deletionTimestamp && ownedBy(pod.metadata, rs.metadata.uid),
  );
  const ready = mine.filter((pod) =>
    (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
  );
  return {
    name: rs.metadata.name,
    image: rs.spec.template.spec.containers[0]?.image ?? '',
    desired: rs.spec.replicas ?? 0,
    pods: mine.length,
    readyPods: ready.length,
  };
}

/** `foo-bar-5d9c: 2 desired, 2 Pods (2 Ready)`, one line per ReplicaSet. */
export function describeRolloutState(state: RolloutState): string {
  const d = state.deployment;
  const sets = state.replicaSets.map((rs) => `${rs.name} ${rs.desired}/${rs.pods}/${rs.readyPods}`);
  return (
    `deployment ${d.readyColumn || '?'} ready (replicas ${d.replicas}, updated ${d.updatedReplicas}, ` +
    `available ${d.availableReplicas}); replicasets desired/pods/ready: ${sets.join(', ') || 'none'}`
  );
}
