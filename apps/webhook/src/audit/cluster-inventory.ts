// What runs in a cluster, read for an audit: namespaces (opted in or not), Pods and workloads,
// page by page (bounded memory per call, a timeout on each). Loaded lazily with the Kubernetes
// client, like everything under kube/.
import { AppsV1Api, BatchV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { INCLUDE_NAMESPACE_LABEL, type KubeObject } from '@signet/k8s-types';
import { withTimeout } from '../kube/deadline.js';
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

export interface InventoryOptions {
  /** Items per list call (default 500). */
  readonly pageSize?: number;
  /** Timeout of each list call (default 30 s). */
  readonly timeoutMs?: number;
}

interface Page {
  readonly items: readonly object[];
  readonly metadata?: { readonly _continue?: string };
}

type Lister = (page: { limit: number; _continue?: string; labelSelector?: string }) => Promise<Page>;

export class ClusterInventory {
  readonly #core: CoreV1Api;
  readonly #apps: AppsV1Api;
  readonly #batch: BatchV1Api;
  readonly #pageSize: number;
  readonly #timeoutMs: number;

  constructor(kubeConfig: KubeConfig, options: InventoryOptions = {}) {
    this.#core = kubeConfig.makeApiClient(CoreV1Api);
    this.#apps = kubeConfig.makeApiClient(AppsV1Api);
    this.#batch = kubeConfig.makeApiClient(BatchV1Api);
    this.#pageSize = options.pageSize ?? 500;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** Namespaces in scope, then their Pods and workloads. */
  async read(scope: InventoryScope): Promise<Inventory> {
    const namespaces = await this.namespaces(scope);
    const inScope = new Set(namespaces.map((n) => n.name));
    const kinds: readonly [string, string, Lister][] = [
      ['v1', 'Pod', (p) => this.#core.listPodForAllNamespaces(p)],
      ['v1', 'ReplicationController', (p) => this.#core.listReplicationControllerForAllNamespaces(p)],
      ['apps/v1', 'Deployment', (p) => this.#apps.listDeploymentForAllNamespaces(p)],
      ['apps/v1', 'ReplicaSet', (p) => this.#apps.listReplicaSetForAllNamespaces(p)],
      ['apps/v1', 'StatefulSet', (p) => this.#apps.listStatefulSetForAllNamespaces(p)],
      ['apps/v1', 'DaemonSet', (p) => this.#apps.listDaemonSetForAllNamespaces(p)],
      ['batch/v1', 'Job', (p) => this.#batch.listJobForAllNamespaces(p)],
      ['batch/v1', 'CronJob', (p) => this.#batch.listCronJobForAllNamespaces(p)],
    ];
    const objects: KubeObject[] = [];
    for (const [apiVersion, kind, list] of kinds) {
      for await (const item of this.#pages(kind, list, scope.labelSelector)) {
        const object = plain(item, apiVersion, kind);
        if (inScope.has(object.metadata?.namespace ?? '')) objects.push(object);
      }
    }
    return { namespaces, objects };
  }

  /** The namespaces in scope, each with whether Signet intercepts it now. */
  async namespaces(scope: InventoryScope): Promise<NamespaceState[]> {
    const excluded = new Set(excludedNamespaces(scope.signetNamespace));
    const wanted = scope.namespaces === undefined ? undefined : new Set(scope.namespaces);
    const states: NamespaceState[] = [];
    for await (const item of this.#pages('Namespace', (p) => this.#core.listNamespace(p))) {
      const meta = (item as { metadata?: { name?: string; labels?: Record<string, string> } }).metadata;
      const name = meta?.name ?? '';
      if (wanted !== undefined && !wanted.has(name)) continue;
      if (excluded.has(name)) continue;
      const optedIn = meta?.labels?.[INCLUDE_NAMESPACE_LABEL] === 'true';
      if (scope.optedInOnly && !optedIn) continue;
      states.push({ name, optedIn });
    }
    return states.sort((a, b) => a.name.localeCompare(b.name));
  }

  async *#pages(what: string, list: Lister, labelSelector?: string): AsyncGenerator<object> {
    let token: string | undefined;
    // A bound on pages: 10,000 pages of 500 is far beyond any cluster; a loop never spins forever.
    for (let page = 0; page < 10_000; page++) {
      const result = await withTimeout(
        `listing ${what}s`,
        this.#timeoutMs,
        list({
          limit: this.#pageSize,
          ...(token ? { _continue: token } : {}),
          ...(labelSelector ? { labelSelector } : {}),
        }),
      );
      yield* result.items;
      token = result.metadata?._continue;
      if (!token) return;
    }
  }
}

/** A typed client object as plain JSON (dates as strings), with the kind typed lists leave out. */
function plain(item: object, apiVersion: string, kind: string): KubeObject {
  return { ...(JSON.parse(JSON.stringify(item)) as KubeObject), apiVersion, kind };
}
