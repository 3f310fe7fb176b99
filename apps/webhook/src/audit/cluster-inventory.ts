// What runs in a cluster, read for an audit: namespaces (opted in or not), Pods and workloads,
// listed in pages of 500 with a timeout on each call. Loaded lazily with the rest of kube/.
import { INCLUDE_NAMESPACE_LABEL, type KubeObject } from '@signet/k8s-types';
import type { KubeApi } from '../kube/kube-api.js';
import { apiJson, type ListPage, listAll, PAGE_SIZE } from '../kube/lists.js';
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

/** One page of a cluster-wide list. */
type PageRequest = { readonly limit: number; readonly _continue?: string; readonly labelSelector?: string };
type ListCall = (
  api: KubeApi,
  request: PageRequest,
  options: ReturnType<KubeApi['deadline']>,
) => Promise<ListPage<unknown>>;

/** Every kind with a pod spec, and its cluster-wide list. */
const KINDS: readonly (readonly [apiVersion: string, kind: string, list: ListCall])[] = [
  ['v1', 'Pod', (api, request, options) => api.core.listPodForAllNamespaces(request, options)],
  [
    'v1',
    'ReplicationController',
    (api, request, options) => api.core.listReplicationControllerForAllNamespaces(request, options),
  ],
  [
    'apps/v1',
    'Deployment',
    (api, request, options) => api.apps.listDeploymentForAllNamespaces(request, options),
  ],
  [
    'apps/v1',
    'ReplicaSet',
    (api, request, options) => api.apps.listReplicaSetForAllNamespaces(request, options),
  ],
  [
    'apps/v1',
    'StatefulSet',
    (api, request, options) => api.apps.listStatefulSetForAllNamespaces(request, options),
  ],
  [
    'apps/v1',
    'DaemonSet',
    (api, request, options) => api.apps.listDaemonSetForAllNamespaces(request, options),
  ],
  ['batch/v1', 'Job', (api, request, options) => api.batch.listJobForAllNamespaces(request, options)],
  ['batch/v1', 'CronJob', (api, request, options) => api.batch.listCronJobForAllNamespaces(request, options)],
];

export class ClusterInventory {
  readonly #api: KubeApi;
  readonly #timeoutMs: number;

  /** `timeoutMs`: the deadline of each list call (default 30 s). */
  constructor(api: KubeApi, timeoutMs = 30_000) {
    this.#api = api;
    this.#timeoutMs = timeoutMs;
  }

  /** Namespaces in scope, then their Pods and workloads. */
  async read(scope: InventoryScope): Promise<Inventory> {
    const namespaces = await this.namespaces(scope);
    const inScope = new Set(namespaces.map((n) => n.name));
    const objects: KubeObject[] = [];
    const options = this.#api.deadline(this.#timeoutMs);
    for (const [apiVersion, kind, list] of KINDS) {
      const { items } = await listAll((token) =>
        list(
          this.#api,
          {
            limit: PAGE_SIZE,
            ...(token ? { _continue: token } : {}),
            ...(scope.labelSelector ? { labelSelector: scope.labelSelector } : {}),
          },
          options,
        ),
      );
      // List items carry no kind or apiVersion.
      for (const typed of items) {
        const item = apiJson<KubeObject>(typed);
        if (inScope.has(item.metadata?.namespace ?? '')) objects.push({ ...item, apiVersion, kind });
      }
    }
    return { namespaces, objects };
  }

  /** The namespaces in scope, each with whether Signet intercepts it now. */
  async namespaces(scope: InventoryScope): Promise<NamespaceState[]> {
    const excluded = new Set(excludedNamespaces(scope.signetNamespace));
    const wanted = scope.namespaces === undefined ? undefined : new Set(scope.namespaces);
    const options = this.#api.deadline(this.#timeoutMs);
    const { items } = await listAll((token) =>
      this.#api.core.listNamespace({ limit: PAGE_SIZE, ...(token ? { _continue: token } : {}) }, options),
    );
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
