// Keeps a local copy of one collection of the API server: list it, then watch from the list's
// resourceVersion; when the watch ends, watch again from the last version seen; when the server
// says the version is too old (410), or anything fails, list again after a pause. The copy is
// whole: `listed` says whether it has been complete at least once.
import { KubeApiError, type KubeClient, statusOf, type WatchEvent } from './client.js';

type KubeObject = Record<string, unknown> & {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
};

export interface ReflectorOptions {
  /** Called after the first list and after every change. */
  readonly onChange: () => void;
  /** Called when a list or watch fails; the reflector lists again after `retryMs`. */
  readonly onError: (error: unknown) => void;
  /** Default 5 s. */
  readonly retryMs?: number;
  /** Objects kept at most (default 10,000); beyond, the collection counts as not listed. */
  readonly maxObjects?: number;
}

function keyOf(object: KubeObject): string {
  return `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
}

export class Reflector {
  readonly #client: KubeClient;
  readonly #path: string;
  readonly #options: ReflectorOptions;
  readonly #objects = new Map<string, KubeObject>();
  readonly #stop = new AbortController();
  #listed = false;
  #running: Promise<void> | undefined;

  constructor(client: KubeClient, path: string, options: ReflectorOptions) {
    this.#client = client;
    this.#path = path;
    this.#options = options;
  }

  /** True once the whole collection was listed. */
  get listed(): boolean {
    return this.#listed;
  }

  /** The objects as last seen. */
  objects(): KubeObject[] {
    return [...this.#objects.values()];
  }

  /** Starts listing and watching in the background. */
  start(): void {
    this.#running ??= this.#loop();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#running;
  }

  async #loop(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      try {
        let version = await this.#list();
        // Watch until the server's version is gone (410) or something fails.
        while (!signal.aborted) {
          const started = Date.now();
          version = await this.#watch(version);
          // A watch the server ends at once, again and again, must not become a busy loop.
          if (Date.now() - started < 1000) await this.#pause(1000);
        }
      } catch (error) {
        if (signal.aborted) return;
        if (statusOf(error) !== 410) this.#options.onError(error);
        if (statusOf(error) !== 410) await this.#pause(this.#options.retryMs ?? 5000);
      }
    }
  }

  async #list(): Promise<string> {
    const { items, resourceVersion } = await this.#client.list<KubeObject>(this.#path);
    const max = this.#options.maxObjects ?? 10_000;
    if (items.length > max)
      throw new Error(`${this.#path} holds ${items.length} objects, more than the ${max} kept`);
    this.#objects.clear();
    for (const item of items) this.#objects.set(keyOf(item), item);
    this.#listed = true;
    this.#options.onChange();
    return resourceVersion;
  }

  /** One watch; returns the version to watch from next. */
  async #watch(from: string): Promise<string> {
    let version = from;
    let gone = false;
    await this.#client.watch(
      this.#path,
      from,
      (event: WatchEvent) => {
        const object = event.object as KubeObject;
        if (event.type === 'ERROR') {
          gone = (object as { code?: unknown }).code === 410;
          return;
        }
        version = object.metadata?.resourceVersion ?? version;
        if (event.type === 'BOOKMARK') return;
        if (event.type === 'DELETED') this.#objects.delete(keyOf(object));
        else this.#objects.set(keyOf(object), object);
        this.#options.onChange();
      },
      this.#stop.signal,
    );
    if (gone)
      throw new KubeApiError(410, 'Expired', `watch of ${this.#path}: resource version ${from} expired`);
    return version;
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      // Stopped already (a watch ended by stop() returns here): no 'abort' event will come, and
      // an unref'd timer alone would let a short-lived process exit with stop() unsettled.
      if (this.#stop.signal.aborted) return resolve();
      const timer = setTimeout(resolve, ms);
      timer.unref();
      this.#stop.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
