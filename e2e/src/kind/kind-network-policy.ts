// The chart's NetworkPolicy in kind: the values that turn it on (through `helm upgrade`, as an
// operator would), the addresses the API server connects from, and Pods to try from. The node
// image's network plugin enforces NetworkPolicy (kube-router's firewall beside kindnetd; see
// @signet/testbed's kindnet manifest).
import { must, poll } from '../scenarios/kube.js';
import { SIGNET_NAMESPACE } from '../signet-webhook.js';
import type { KindCluster } from './kind-cluster.js';
import { type KindSignet, SIGNET_RELEASE, SIGNET_SELECTOR } from './kind-signet.js';
import type { PodRef } from './reachability.js';

interface NodeStatus {
  metadata: { name: string; labels?: Record<string, string> };
  status: { addresses?: { type: string; address: string }[] };
}

export interface PlacedPod extends PodRef {
  readonly node: string;
  readonly ip: string;
}

const CONTROL_PLANE_LABEL = 'node-role.kubernetes.io/control-plane';

/** Every node's name, InternalIP and whether it runs the control plane (the API server). */
export async function kindNodes(
  cluster: KindCluster,
): Promise<{ name: string; ip: string; controlPlane: boolean }[]> {
  const nodes = await cluster.getJson<{ items: NodeStatus[] }>(['nodes']);
  return nodes.items.map((node) => ({
    name: node.metadata.name,
    ip: node.status.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '',
    controlPlane: node.metadata.labels?.[CONTROL_PLANE_LABEL] !== undefined,
  }));
}

/** Waits until kube-router, the node image's NetworkPolicy agent, is Ready on every node. */
export async function waitForNetworkPolicyAgent(cluster: KindCluster): Promise<void> {
  must(
    await cluster.kubectl(
      ['rollout', 'status', 'daemonset/kube-router', '-n', 'kube-system', '--timeout=120s'],
      {
        timeoutMs: 130_000,
      },
    ),
  );
}

/**
 * `helm upgrade` of Signet's release with `networkPolicy` replaced (the other values kept): what
 * an operator does to turn the policy on, change its sources or turn it off. The Deployment is
 * unchanged, so nothing restarts.
 */
export async function setNetworkPolicy(
  signet: KindSignet,
  networkPolicy: Record<string, unknown>,
): Promise<void> {
  await signet.upgrade({ networkPolicy });
}

/** Signet's running Pods with their node and Pod IP. */
export async function signetReplicas(cluster: KindCluster): Promise<PlacedPod[]> {
  const pods = await cluster.getJson<{
    items: {
      metadata: { name: string; deletionTimestamp?: string };
      spec: { nodeName?: string };
      status: { phase?: string; podIP?: string };
    }[];
  }>(['pods', '-n', SIGNET_NAMESPACE, '-l', SIGNET_SELECTOR]);
  return pods.items
    .filter((p) => p.status.phase === 'Running' && !p.metadata.deletionTimestamp)
    .map((p) => ({
      namespace: SIGNET_NAMESPACE,
      name: p.metadata.name,
      node: p.spec.nodeName ?? '',
      ip: p.status.podIP ?? '',
    }));
}

/**
 * Makes sure a Signet replica runs on each of `nodes` (the chart prefers one per node, which a
 * drain undoes): a replica sharing its node is deleted and its replacement scheduled elsewhere.
 */
export async function spreadSignet(cluster: KindCluster, nodes: readonly string[]): Promise<PlacedPod[]> {
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    const replicas = await signetReplicas(cluster);
    const missing = nodes.filter((node) => !replicas.some((r) => r.node === node));
    if (missing.length === 0 && replicas.length === nodes.length) return replicas;
    const crowded = replicas.find((r, i) => replicas.findIndex((o) => o.node === r.node) !== i);
    if (crowded)
      must(await cluster.kubectl(['delete', 'pod', '-n', SIGNET_NAMESPACE, crowded.name, '--wait=false']));
    await poll('Signet back to its replicas, all Ready', 120_000, async () => {
      const result = await cluster.kubectl([
        'rollout',
        'status',
        `deployment/${SIGNET_RELEASE}-webhook`,
        '-n',
        SIGNET_NAMESPACE,
        '--timeout=5s',
      ]);
      const running = await signetReplicas(cluster);
      return result.exitCode === 0 && running.length === nodes.length ? true : result.stdout + result.stderr;
    });
  }
  throw new Error(`Signet's replicas are not on every node of ${nodes.join(', ')}`);
}

/** One Pod of `image` (a busybox that sleeps) pinned to each node, Running. */
export async function clientPods(
  cluster: KindCluster,
  namespace: string,
  image: string,
  nodes: readonly string[],
): Promise<PlacedPod[]> {
  const names = nodes.map((node) => `client-${node.replace(`${cluster.name}-`, '')}`);
  await cluster.apply(
    nodes.map((node, i) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: names[i], namespace },
      spec: { nodeName: node, terminationGracePeriodSeconds: 1, containers: [{ name: 'client', image }] },
    })),
  );
  must(
    await cluster.kubectl(
      ['wait', '--for=condition=Ready', ...names.map((n) => `pod/${n}`), '-n', namespace, '--timeout=90s'],
      { timeoutMs: 100_000 },
    ),
  );
  const pods = await cluster.getJson<{ items: { metadata: { name: string }; status: { podIP?: string } }[] }>(
    ['pods', '-n', namespace],
  );
  return nodes.map((node, i) => ({
    namespace,
    name: names[i] ?? '',
    node,
    ip: pods.items.find((p) => p.metadata.name === names[i])?.status.podIP ?? '',
  }));
}
