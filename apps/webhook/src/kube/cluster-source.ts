import {
  CoreV1Api,
  CustomObjectsApi,
  type Informer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  makeInformer,
  type ObjectCache,
} from '@kubernetes/client-node';
import type { Logger } from '../logger.js';
import { collectPolicyObjects, type PolicyObjects } from '../policy/policy-objects.js';
import { statusOf } from './deadline.js';

type Watched = Informer<KubernetesObject> & ObjectCache<KubernetesObject>;

interface WatchedCollection {
  readonly kind: string;
  readonly apiVersion: string;
  informer: Watched;
  /** The first list succeeded: the informer's cache holds the collection. */
  listed: boolean;
}

export interface ClusterPolicySourceOptions {
  readonly kubeConfig: KubeConfig;
  /** The webhook's namespace: its config ConfigMap and the Secrets policies reference live here. */
  readonly namespace: string;
  readonly logger: Logger;
  /** Called with every new consistent view, debounced; compile and swap it in there. */
  readonly onChange: (objects: PolicyObjects) => void;
  readonly debounceMs?: number;
}

const GROUP = 'policy.sigstore.dev';

/**
 * Watches ClusterImagePolicies (v1beta1, or v1alpha1 where only that is served), TrustRoots,
 * the `config-policy-controller` ConfigMap and the Secrets of the webhook's namespace with
 * informers, and hands a complete snapshot to `onChange` after each burst of changes. `synced`
 * resolves after the first complete list of everything (readiness waits for it).
 */
export class ClusterPolicySource {
  readonly #options: ClusterPolicySourceOptions;
  readonly #informers: WatchedCollection[] = [];
  #resolveSynced: (() => void) | undefined;
  /** Resolves after the first complete snapshot was delivered (every collection listed once). */
  readonly synced: Promise<void> = new Promise((resolve) => {
    this.#resolveSynced = resolve;
  });
  #timer: NodeJS.Timeout | undefined;
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
    const { kubeConfig: kc, namespace } = this.#options;
    const custom = kc.makeApiClient(CustomObjectsApi);
    const core = kc.makeApiClient(CoreV1Api);
    const policyVersion = await this.#servedPolicyVersion(custom);
    const watch = (kind: string, apiVersion: string, path: string, fn: () => Promise<unknown>) => {
      // client-node's informer reports a failed list only as an `error` event (its start() still
      // resolves), so a collection counts as listed only when our list function has returned.
      const entry: WatchedCollection = { kind, apiVersion, listed: false, informer: undefined as never };
      const list = async () => {
        const result = (await fn()) as KubernetesListObject<KubernetesObject>;
        entry.listed = true;
        this.#schedule();
        return result;
      };
      entry.informer = makeInformer(kc, path, list);
      this.#informers.push(entry);
    };
    watch(
      'ClusterImagePolicy',
      `${GROUP}/${policyVersion}`,
      `/apis/${GROUP}/${policyVersion}/clusterimagepolicies`,
      () =>
        custom.listClusterCustomObject({
          group: GROUP,
          version: policyVersion,
          plural: 'clusterimagepolicies',
        }),
    );
    watch('TrustRoot', `${GROUP}/v1alpha1`, `/apis/${GROUP}/v1alpha1/trustroots`, () =>
      custom.listClusterCustomObject({ group: GROUP, version: 'v1alpha1', plural: 'trustroots' }),
    );
    watch('ConfigMap', 'v1', `/api/v1/namespaces/${namespace}/configmaps`, () =>
      core.listNamespacedConfigMap({ namespace }),
    );
    watch('Secret', 'v1', `/api/v1/namespaces/${namespace}/secrets`, () =>
      core.listNamespacedSecret({ namespace }),
    );
    for (const { informer } of this.#informers) {
      for (const verb of ['add', 'update', 'delete'] as const) informer.on(verb, () => this.#schedule());
      informer.on('error', (error: unknown) => {
        this.#options.logger.error({ err: error }, 'policy watch failed; restarting it in 5s');
        setTimeout(() => {
          if (!this.#stopped) void informer.start().catch(() => undefined);
        }, 5000).unref();
      });
    }
    await Promise.all(this.#informers.map(({ informer }) => informer.start()));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await Promise.all(this.#informers.map(({ informer }) => informer.stop()));
  }

  /** The current view of everything watched. */
  snapshot(): PolicyObjects {
    // Items of typed lists carry no kind or apiVersion; the parsers dispatch on them.
    const objects = this.#informers.flatMap(({ kind, apiVersion, informer }) =>
      informer.list().map((object) => ({ ...object, kind, apiVersion: object.apiVersion ?? apiVersion })),
    );
    return collectPolicyObjects(objects, this.#options.namespace);
  }

  async #servedPolicyVersion(custom: CustomObjectsApi): Promise<'v1beta1' | 'v1alpha1'> {
    try {
      await custom.listClusterCustomObject({
        group: GROUP,
        version: 'v1beta1',
        plural: 'clusterimagepolicies',
        limit: 1,
      });
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
    const pending = this.#informers.filter((entry) => !entry.listed).map((entry) => entry.kind);
    if (pending.length > 0) {
      this.#options.logger.warn(
        { pending },
        'not all policy collections are listed yet; not delivering a partial view',
      );
      return;
    }
    this.#resolveSynced?.();
    try {
      this.#options.onChange(this.snapshot());
    } catch (error) {
      this.#options.logger.error(
        { err: error },
        'applying the new policy snapshot failed; keeping the previous one',
      );
    }
  }
}
