// What runs in a cluster, read for an audit: namespaces (opted in or not), Pods and workloads,
// listed in pages of 500 with a timeout on each call. Loaded lazily with the rest of kube/.
import { INCLUDE_NAMESPACE_LABEL, type KubeObject } from '@signet/k8s-types';
import type { KubeClient } from '../kube/client.js';
import { excludedNamespaces } from '../webhook-configurations.js';
import type { NamespaceState } from './audit-report.js';

export interface InventoryScope {
  /** Namespaces to read; `undefined`: every namespace Signet could intercept. */
  readonly namespaces?: readonly string[];
  /** Only namespaces labelled `policy.sigstore.dev/include=true` (what Signet intercepts today). */
  readonly optedInOnly: boolean;
  readonly labelSelector?: string;
  /** Signet's namespace: never intercepted, so never audited. */
  readonly signetNamespace: string;
}

export interface Inventory {
  /** The namespaces audited. */
  readonly namespaces: readonly NamespaceState[];
  /** Pods and workloads of those namespaces, with `kind` and `apiVersion` set. */
  readonly objects: readonly KubeObject[];
}

/** Every kind with a pod spec, and where its cluster-wide list is. */
const KINDS: readonly (readonly [apiVersion: string, kind: string, path: string])[] = [
  ['v1', 'Pod', '/api/v1/pods'],
  ['v1', 'ReplicationController', '/api/v1/replicationcontrollers'],
  ['apps/v1', 'Deployment', '/apis/apps/v1/deployments'],
  ['apps/v1', 'ReplicaSet', '/apis/apps/v1/replicasets'],
  ['apps/v1', 'StatefulSet', '/apis/apps/v1/statefulsets'],
  ['apps/v1', 'DaemonSet', '/apis/apps/v1/daemonsets'],
  ['batch/v1', 'Job', '/apis/batch/v1/jobs'],
  ['batch/v1', 'CronJob', '/apis/batch/v1/cronjobs'],
];

export class ClusterInventory {
  readonly #client: KubeClient;
  readonly #timeoutMs: number;

  /** `timeoutMs`: the deadline of each list call (default 30 s). */
  constructor(client: KubeClient, timeoutMs = 30_000) {
    this.#client = client;
    this.#timeoutMs = timeoutMs;
  }

  /** Namespaces in scope, then their Pods and workloads. */
  async read(scope: InventoryScope): Promise<Inventory> {
    const namespaces = await this.namespaces(scope);
    const inScope = new Set(namespaces.map((n) => n.name));
    const objects: KubeObject[] = [];
    for (const [apiVersion, kind, path] of KINDS) {
      const { items } = await this.#client.list<KubeObject>(path, {
        timeoutMs: this.#timeoutMs,
        ...(scope.labelSelector ? { query: { labelSelector: scope.labelSelector } } : {}),
      });
      // List items carry no kind or apiVersion.
      for (const item of items)
        if (inScope.has(item.metadata?.namespace ?? '')) objects.push({ ...item, apiVersion, kind });
    }
    return { namespaces, objects };
  }

  /** The namespaces in scope, each with whether Signet intercepts it now. */
  async namespaces(scope: InventoryScope): Promise<NamespaceState[]> {
    const excluded = new Set(excludedNamespaces(scope.signetNamespace));
    const wanted = scope.namespaces === undefined ? undefined : new Set(scope.namespaces);
    const { items } = await this.#client.list<KubeObject>('/api/v1/namespaces', {
      timeoutMs: this.#timeoutMs,
    });
    const states: NamespaceState[] = [];
    for (const item of items) {
      const name = item.metadata?.name ?? '';
      if (wanted !== undefined && !wanted.has(name)) continue;
      if (excluded.has(name)) continue;
      const labels = item.metadata?.labels as Record<string, string> | undefined;
      const optedIn = labels?.[INCLUDE_NAMESPACE_LABEL] === 'true';
      if (scope.optedInOnly && !optedIn) continue;
      states.push({ name, optedIn });
    }
    return states.sort((a, b) => a.name.localeCompare(b.name));
  }
}
