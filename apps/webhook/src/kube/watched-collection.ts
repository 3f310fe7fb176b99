// One collection of the API server kept current by client-node's informer (ListWatch): it lists,
// watches from the list's resourceVersion, watches again when a watch ends or has had no event for
// 30 s (a half-open connection to a vanished API server), and lists again when the server says that
// version is gone (410). What it leaves to its user is restarting after a failure (a list refused,
// the API server unreachable): here, after a pause, from the last resourceVersion seen, so that
// nothing changed meanwhile is missed.
import {
  type KubeConfig,
  type KubernetesObject,
  type ListWatch,
  makeInformer,
} from '@kubernetes/client-node';
import { KubeApiError, kubeApiError, statusOf } from './kube-errors.js';
import { type ListPage, listAll, PAGE_SIZE } from './lists.js';

export type WatchedObject = Record<string, unknown> & KubernetesObject;

export interface WatchedCollectionOptions {
  readonly config: KubeConfig;
  /** The collection's path, e.g. `/api/v1/namespaces/signet-system/secrets`. */
  readonly path: string;
  /** One page of the list (`limit` PAGE_SIZE, from `continueToken`), items as the API's JSON. */
  readonly listPage: (continueToken: string | undefined, limit: number) => Promise<ListPage<WatchedObject>>;
  /** Called after each list and change. */
  readonly onChange: () => void;
  /** Called when a list or watch fails; it is restarted after `retryMs`. */
  readonly onError: (error: unknown) => void;
  /** Default 5 s. */
  readonly retryMs?: number;
  /** Objects kept at most (default 10,000); a longer list fails, and the collection stays not listed. */
  readonly maxObjects?: number;
  /**
   * A collection that may not be served (a CRD not installed): a 404 counts as listed and empty,
   * is told here instead of `onError`, and is looked for again after `retryMs`.
   */
  readonly absent?: { readonly retryMs: number; readonly onAbsent: () => void };
}

export class WatchedCollection {
  readonly #options: WatchedCollectionOptions;
  readonly #informer: ListWatch<WatchedObject>;
  #listed = false;
  #stopped = false;
  #retry: NodeJS.Timeout | undefined;

  constructor(options: WatchedCollectionOptions) {
    this.#options = options;
    const informer = makeInformer<WatchedObject>(options.config, options.path, () => this.#list());
    // makeInformer's type is the interface; the object is a ListWatch (its cache is read below).
    this.#informer = informer as ListWatch<WatchedObject>;
    informer.on('change', () => this.#options.onChange());
    informer.on('error', (error) => this.#failed(error));
  }

  /** True once the whole collection was listed. */
  get listed(): boolean {
    return this.#listed;
  }

  /** The objects as last seen. */
  objects(): readonly WatchedObject[] {
    return this.#informer.list();
  }

  /** One object as last seen, by name (and namespace): a map read. */
  get(name: string, namespace?: string): WatchedObject | undefined {
    return this.#informer.get(name, namespace);
  }

  /** Lists and watches in the background. */
  start(): void {
    this.#informer.start().catch((error: unknown) => this.#failed(error));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    await this.#informer.stop();
  }

  async #list() {
    const { items, resourceVersion } = await listAll(
      (token) => this.#options.listPage(token, PAGE_SIZE),
      this.#options.maxObjects ?? 10_000,
    ).catch((error: unknown) => {
      if (error instanceof RangeError) throw new RangeError(`${this.#options.path}: ${error.message}`);
      throw error;
    });
    this.#listed = true;
    // Delivered after the informer took the items in (onChange debounces on a timer).
    this.#options.onChange();
    return { items, metadata: { resourceVersion } };
  }

  #failed(error: unknown): void {
    // Stopping aborts the watch, which the informer reports as an error.
    if (this.#stopped) return;
    const { absent } = this.#options;
    if (absent !== undefined && statusOf(error) === 404) {
      const first = !this.#listed;
      this.#listed = true;
      if (first) absent.onAbsent();
      this.#options.onChange();
      this.#restartAfter(absent.retryMs);
      return;
    }
    // A failed list is a KubeApiError already, a list too long a RangeError; a watch fails as
    // client-node's Error with statusCode, or undici's fetch failure.
    const said =
      error instanceof KubeApiError || error instanceof RangeError
        ? error
        : kubeApiError(`watch ${this.#options.path}`, error);
    this.#options.onError(said);
    this.#restartAfter(this.#options.retryMs ?? 5000);
  }

  #restartAfter(ms: number): void {
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => {
      if (!this.#stopped) this.start();
    }, ms);
    this.#retry.unref();
  }
}
