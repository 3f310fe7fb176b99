// Steps of the drain-during-an-outage scenario (issue 24) in kind: a Deployment held on one node
// with a PodDisruptionBudget, its image already on the other node, `kubectl drain` with a deadline,
// the Events of a namespace, and Signet's records.
import { must, poll } from '../scenarios/kube.js';
import type { KindCluster } from './kind-cluster.js';

export interface NodeStatus {
  readonly metadata: { readonly name: string; readonly labels?: Record<string, string> };
  readonly spec?: { readonly unschedulable?: boolean };
}

/**
 * A Deployment of `image` (2 replicas, a PodDisruptionBudget of minAvailable 1) whose Pods all run
 * on `node`: the other nodes are cordoned while it rolls out, then uncordoned, so its replacements
 * may go anywhere.
 */
export async function deployOnOneNode(
  cluster: KindCluster,
  options: {
    readonly namespace: string;
    readonly name: string;
    readonly image: string;
    readonly node: string;
  },
): Promise<void> {
  const { namespace, name, image, node } = options;
  const others = (await cluster.nodeNames()).filter((n) => n !== node);
  for (const other of others) must(await cluster.kubectl(['cordon', other]));
  try {
    await cluster.apply([
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name, namespace },
        spec: { minAvailable: 1, selector: { matchLabels: { app: name } } },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, namespace },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image }] },
          },
        },
      },
    ]);
    must(
      await cluster.kubectl(['rollout', 'status', `deployment/${name}`, '-n', namespace, '--timeout=120s'], {
        timeoutMs: 130_000,
      }),
    );
  } finally {
    for (const other of others) await cluster.kubectl(['uncordon', other]);
  }
}

/** Runs a Pod of `image` on `node` until it is Ready, so that the node has the image; then deletes it. */
export async function pullOnNode(
  cluster: KindCluster,
  options: { readonly namespace: string; readonly image: string; readonly node: string },
): Promise<void> {
  const name = `pull-${options.node.replace(/[^a-z0-9-]/g, '')}`.slice(0, 60);
  await cluster.apply({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: options.namespace },
    spec: {
      nodeName: options.node,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'app', image: options.image }],
    },
  });
  must(
    await cluster.kubectl(
      ['wait', '--for=condition=Ready', `pod/${name}`, '-n', options.namespace, '--timeout=120s'],
      { timeoutMs: 130_000 },
    ),
  );
  must(await cluster.kubectl(['delete', 'pod', name, '-n', options.namespace, '--wait=true']));
}

/** `kubectl drain NODE` with a deadline; a drain that cannot finish is a result, not an error. */
export function drain(cluster: KindCluster, node: string, timeoutSeconds: number) {
  return cluster.kubectl(
    // --force: earlier scenarios leave bare Pods (probes, clients) behind.
    [
      'drain',
      node,
      '--ignore-daemonsets',
      '--delete-emptydir-data',
      '--force',
      `--timeout=${timeoutSeconds}s`,
    ],
    { timeoutMs: (timeoutSeconds + 30) * 1000 },
  );
}

export interface EventItem {
  readonly reason: string;
  readonly message: string;
  readonly type: string;
  /** How many times it happened: the recorder folds repeats of one message into one Event. */
  readonly count?: number;
  readonly involvedObject: { readonly kind: string; readonly name: string };
}

/** The Events of `namespace` with `reason`. */
export async function eventsOf(
  cluster: KindCluster,
  namespace: string,
  reason: string,
): Promise<EventItem[]> {
  return (
    await cluster.getJson<{ items: EventItem[] }>([
      'events',
      '-n',
      namespace,
      '--field-selector',
      `reason=${reason}`,
    ])
  ).items;
}

export interface PodPlacement {
  readonly metadata: { readonly name: string; readonly deletionTimestamp?: string };
  readonly spec: { readonly nodeName?: string };
  readonly status: { readonly phase?: string; readonly containerStatuses?: { readonly ready: boolean }[] };
}

/** The live (not terminating) Pods of `app=NAME`. */
export async function livePods(
  cluster: KindCluster,
  namespace: string,
  name: string,
): Promise<PodPlacement[]> {
  const pods = await cluster.getJson<{ items: PodPlacement[] }>([
    'pods',
    '-n',
    namespace,
    '-l',
    `app=${name}`,
  ]);
  return pods.items.filter((p) => p.metadata.deletionTimestamp === undefined);
}

/** Waits until `app=NAME` has `count` Ready Pods, none on `avoid`. */
export async function waitForReadyPods(
  cluster: KindCluster,
  options: {
    readonly namespace: string;
    readonly name: string;
    readonly count: number;
    readonly avoid?: string;
  },
  timeoutMs = 120_000,
): Promise<PodPlacement[]> {
  let ready: PodPlacement[] = [];
  await poll(`${options.count} Ready Pods of ${options.namespace}/${options.name}`, timeoutMs, async () => {
    const pods = await livePods(cluster, options.namespace, options.name);
    ready = pods.filter(
      (p) => p.status.containerStatuses?.every((c) => c.ready) === true && p.spec.nodeName !== options.avoid,
    );
    return ready.length >= options.count
      ? true
      : pods.map((p) => `${p.metadata.name} ${p.status.phase} on ${p.spec.nodeName}`).join(', ');
  });
  return ready;
}

/** Makes the ReplicaSet controller look at `deployment`'s ReplicaSets now (a metadata write; row 4). */
export async function nudgeReplicaSets(cluster: KindCluster, namespace: string, name: string): Promise<void> {
  must(
    await cluster.kubectl([
      'annotate',
      'replicasets',
      '-n',
      namespace,
      '-l',
      `app=${name}`,
      `signet.dev/e2e-nudge=${Date.now()}`,
      '--overwrite',
    ]),
  );
}

/** How many times Events of `reason` happened in `namespace` (repeats folded into one Event counted). */
export async function eventCount(cluster: KindCluster, namespace: string, reason: string): Promise<number> {
  return (await eventsOf(cluster, namespace, reason)).reduce((sum, e) => sum + (e.count ?? 1), 0);
}
