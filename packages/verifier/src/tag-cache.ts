// Where a tag pointed a moment ago. A rollout asks the same tag to be resolved for every Deployment
// (and, with pinning off, every Pod) that names it; the answer is pinned into the object at once,
// so a few seconds of reuse costs nothing in safety and saves a registry round trip per object.
// Bounded in size and age; failures are never kept, and concurrent askers share one request.

interface Entry {
  readonly digest: Promise<string>;
  readonly at: number;
}

export interface TagCacheOptions {
  /** How long a resolution is reused (default 30 s; 0 turns the cache off). */
  readonly ttlMs?: number;
  /** Tags kept at most (default 10,000); the oldest go first. */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

export class TagCache {
  readonly #entries = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #now: () => number;

  constructor(options: TagCacheOptions = {}) {
    this.#ttlMs = options.ttlMs ?? 30_000;
    this.#max = options.maxEntries ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The digest `key` resolved to within the TTL, or `resolve()`'s answer (shared while in flight).
   * `shared` says whether the answer is another caller's, which ran under that caller's deadline.
   */
  get(
    key: string,
    resolve: () => Promise<string>,
  ): { readonly digest: Promise<string>; readonly shared: boolean } {
    if (this.#ttlMs <= 0) return { digest: resolve(), shared: false };
    const now = this.#now();
    const hit = this.#entries.get(key);
    if (hit !== undefined && now - hit.at < this.#ttlMs) return { digest: hit.digest, shared: true };
    const digest = resolve();
    this.#entries.delete(key);
    this.#entries.set(key, { digest, at: now });
    while (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value as string);
    digest.catch(() => {
      if (this.#entries.get(key)?.digest === digest) this.#entries.delete(key);
    });
    return { digest, shared: false };
  }
}
