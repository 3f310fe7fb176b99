import type { Part } from '../lifecycle/part.js';
import type { Logger } from '../logger.js';
import { collectPolicyObjects, type PolicyObjects } from '../policy/policy-objects.js';
import type { KubeApi } from './kube-api.js';
import { statusOf } from './kube-errors.js';
import { apiJson, type ListPage } from './lists.js';
import type { WatchedPolicyObject } from './status-writer.js';
import { WatchedCollection, type WatchedObject } from './watched-collection.js';

interface Collection {
  readonly kind: string;
  readonly apiVersion: string;
  readonly watched: WatchedCollection;
  /** Set for the custom resources (their status is written there). */
  readonly resource?: WatchedPolicyObject['resource'];
}

export interface ClusterPolicySourceOptions {
  readonly api: KubeApi;
  /** The webhook's namespace: its config ConfigMap and the Secrets policies reference live here. */
  readonly namespace: string;
  readonly logger: Logger;
  /**
   * Called with every new consistent view, debounced; compile and swap it in there. Changes that
   * do not touch what policies are compiled from (status, finalizers, resourceVersion) are not
   * delivered: writing a policy's status must not recompile every policy.
   */
  readonly onChange: (objects: PolicyObjects) => void;
  /** Called after every burst of changes, status-only ones included (status reconciliation). */
  readonly onObjects?: () => void;
  /** Called, besides the log line, when a list or watch fails (it is retried in 5 s). */
  readonly onError?: (error: unknown) => void;
  readonly debounceMs?: number;
}

/** What a policy compile reads of an object: everything but status and bookkeeping metadata. */
function compiledPart(object: Record<string, unknown>): unknown {
  const {
    status: _status,
    metadata,
    ...rest
  } = object as { status?: unknown; metadata?: Record<string, unknown> };
  if (metadata === undefined) return rest;
  const { resourceVersion: _v, managedFields: _m, finalizers: _f, ...kept } = metadata;
  return { ...rest, metadata: kept };
}

const GROUP = 'policy.sigstore.dev';

/** A list page may take this long (the informer lists again after a failure). */
const LIST_TIMEOUT_MS = 30_000;

/** The paging parameters of a list call. */
function pageRequest(token: string | undefined, limit: number): { limit: number; _continue?: string } {
  return { limit, ...(token ? { _continue: token } : {}) };
}

/** A typed list page with its items as the API's JSON: the watch delivers JSON, so both agree. */
function asApiJson(page: ListPage<unknown>): ListPage<WatchedObject> {
  return { ...page, items: page.items.map((item) => apiJson<WatchedObject>(item)) };
}

/**
 * Watches ClusterImagePolicies (v1beta1, or v1alpha1 where only that is served), TrustRoots,
 * the `config-policy-controller` ConfigMap and the Secrets of the webhook's namespace (list, then
 * watch), and hands a complete snapshot to `onChange` after each burst of changes. `synced`
 * resolves after the first complete list of everything (readiness waits for it).
 */
export class ClusterPolicySource implements Part {
  readonly name = 'policy watches';
  readonly #options: ClusterPolicySourceOptions;
  readonly #collections: Collection[] = [];
  #resolveSynced: (() => void) | undefined;
  /** Resolves after the first complete snapshot was delivered (every collection listed once). */
  readonly synced: Promise<void> = new Promise((resolve) => {
    this.#resolveSynced = resolve;
  });
  #timer: NodeJS.Timeout | undefined;
  /** What the last delivered view was compiled from. */
  #delivered: string | undefined;
  #started = false;
  #stopped = false;

  constructor(options: ClusterPolicySourceOptions) {
    this.#options = options;
  }

  /**
   * Starts the watches. Snapshots are delivered only once every collection was listed: a failed
   * list (no RBAC, API server starting) leaves Signet not ready, never ready with no policies.
   * Failed lists and watches restart after 5 s. Await `synced` for the first delivery.
   */
  async start(): Promise<void> {
    if (this.#started) throw new Error('ClusterPolicySource already started');
    this.#started = true;
    const { api, namespace } = this.#options;
    const policyVersion = await this.#servedPolicyVersion();
    const timeout = api.deadline(LIST_TIMEOUT_MS);
    this.#watchPolicies('ClusterImagePolicy', policyVersion, 'clusterimagepolicies');
    this.#watchPolicies('TrustRoot', 'v1alpha1', 'trustroots');
    this.#watch('ConfigMap', 'v1', `/api/v1/namespaces/${namespace}/configmaps`, (token, limit) =>
      api.core.listNamespacedConfigMap({ namespace, ...pageRequest(token, limit) }, timeout).then(asApiJson),
    );
    this.#watch('Secret', 'v1', `/api/v1/namespaces/${namespace}/secrets`, (token, limit) =>
      api.core.listNamespacedSecret({ namespace, ...pageRequest(token, limit) }, timeout).then(asApiJson),
    );
    for (const { watched } of this.#collections) watched.start();
  }

  /** A policy.sigstore.dev collection: listed as the API's JSON, its status written where it is read. */
  #watchPolicies(kind: string, version: string, plural: string): void {
    const resource = { group: GROUP, version, plural };
    const timeout = this.#options.api.deadline(LIST_TIMEOUT_MS);
    this.#watch(
      kind,
      `${GROUP}/${version}`,
      `/apis/${GROUP}/${version}/${plural}`,
      (token, limit) =>
        this.#options.api.customObjects.listClusterCustomObject(
          { ...resource, ...pageRequest(token, limit) },
          timeout,
        ) as Promise<ListPage<WatchedObject>>,
      resource,
    );
  }

  #watch(
    kind: string,
    apiVersion: string,
    path: string,
    listPage: (token: string | undefined, limit: number) => Promise<ListPage<WatchedObject>>,
    resource?: WatchedPolicyObject['resource'],
  ): void {
    const watched = new WatchedCollection({
      config: this.#options.api.config,
      path,
      listPage,
      onChange: () => this.#schedule(),
      onError: (error) => {
        this.#options.logger.error(
          { err: error, collection: path },
          'policy watch failed; restarting it in 5s',
        );
        this.#options.onError?.(error);
      },
    });
    this.#collections.push({ kind, apiVersion, watched, ...(resource ? { resource } : {}) });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await Promise.all(this.#collections.map(({ watched }) => watched.stop()));
  }

  /** The current view of everything watched. */
  snapshot(): PolicyObjects {
    return collectPolicyObjects(this.#objects(), this.#options.namespace);
  }

  /** The ClusterImagePolicies and TrustRoots as watched, with the collection each is served from. */
  policyObjects(): WatchedPolicyObject[] {
    return this.#collections.flatMap(({ kind, apiVersion, watched, resource }) =>
      resource !== undefined && (kind === 'ClusterImagePolicy' || kind === 'TrustRoot')
        ? watched.objects().map((object) => ({
            kind,
            resource,
            object: { ...object, kind, apiVersion: (object.apiVersion as string | undefined) ?? apiVersion },
          }))
        : [],
    );
  }

  #objects(): Record<string, unknown>[] {
    // Items of typed lists carry no kind or apiVersion; the parsers dispatch on them.
    return this.#collections.flatMap(({ kind, apiVersion, watched }) =>
      watched.objects().map((object) => ({ ...object, kind, apiVersion: object.apiVersion ?? apiVersion })),
    );
  }

  async #servedPolicyVersion(): Promise<'v1beta1' | 'v1alpha1'> {
    try {
      await this.#options.api.customObjects.listClusterCustomObject(
        { group: GROUP, version: 'v1beta1', plural: 'clusterimagepolicies', limit: 1 },
        this.#options.api.deadline(10_000),
      );
      return 'v1beta1';
    } catch (error) {
      // Only a 404 means "not served"; anything else (no RBAC yet, API server starting) is retried
      // by the v1beta1 watch itself.
      if (statusOf(error) !== 404) return 'v1beta1';
      this.#options.logger.warn(
        { err: error },
        'ClusterImagePolicy v1beta1 is not served; watching v1alpha1',
      );
      return 'v1alpha1';
    }
  }

  #schedule(): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#deliver(), this.#options.debounceMs ?? 100);
    this.#timer.unref();
  }

  #deliver(): void {
    const pending = this.#collections.filter((entry) => !entry.watched.listed).map((entry) => entry.kind);
    if (pending.length > 0) {
      this.#options.logger.warn(
        { pending },
        'not all policy collections are listed yet; not delivering a partial view',
      );
      return;
    }
    this.#resolveSynced?.();
    try {
      const objects = this.#objects();
      const compiled = JSON.stringify(objects.map(compiledPart));
      if (compiled !== this.#delivered) {
        this.#delivered = compiled;
        this.#options.onChange(collectPolicyObjects(objects, this.#options.namespace));
      }
      this.#options.onObjects?.();
    } catch (error) {
      this.#options.logger.error(
        { err: error },
        'applying the new policy snapshot failed; keeping the previous one',
      );
    }
  }
}
