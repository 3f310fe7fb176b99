// The `remote` TrustRoots of a cluster as living roots: one per TrustRoot (by name and spec), kept
// across policy compiles so a remote root is fetched once, then refreshed on the caller's
// schedule rather than on every policy change, and survives a mirror outage with its last good
// content (until that content's metadata expires). Whoever writes a TrustRoot names its mirror:
// it is reached through the private-address guard (`OutboundNetwork`) unless the operator listed
// its host. Bounded: at most `maxRoots` are kept, TrustRoots no longer present are dropped by
// `retain` (their cache entries too), at most two fetch at once, and a root that has none is
// fetched again at most every `retryAfterMs` however often policies are compiled.
import { join } from 'node:path';
import type { TrustRoot } from '@signet/k8s-types';
import type { NetworkOptions } from '@signet/registry';
import { OutboundNetwork } from '@signet/registry';
import type { TrustRootError } from './errors.js';
import { type LivingRootEvent, LivingTrustRoot } from './living-root.js';
import { type RemoteRootSpec, remoteRootSpec } from './root-spec.js';
import type { CompiledTrustRoot } from './trusted-root.js';
import { TufMetadataCache } from './tuf-cache.js';
import { httpFiles, type TufClient } from './tuf-client.js';

export interface RemoteTrustRootsOptions {
  /** Persistent cache; entries go to `<cacheDir>/remote/`. None: no cache. */
  readonly cacheDir?: string;
  readonly client?: TufClient;
  readonly timeoutMs?: number;
  readonly clock?: () => Date;
  readonly onEvent?: (event: LivingRootEvent) => void;
  readonly maxRoots?: number;
  /** Hosts (`host[:port]`) the operator allows mirrors on loopback, private or link-local addresses at. */
  readonly privateHosts?: Iterable<string>;
  /** Proxies (from `env`), extra CAs, name resolution (`lookup`). */
  readonly network?: NetworkOptions;
  /** How long after a failed first fetch a root that has none is fetched again on load (default 30 s). */
  readonly retryAfterMs?: number;
  /** Fetches at once, across every root (default 2): each may hold a few MiB in memory and on disk. */
  readonly concurrency?: number;
}

export class RemoteTrustRoots {
  readonly #options: RemoteTrustRootsOptions;
  readonly #roots = new Map<string, LivingTrustRoot>();
  readonly #cache: TufMetadataCache | undefined;
  readonly #outbound: OutboundNetwork;
  readonly #queue: <T>(task: () => Promise<T>) => Promise<T>;

  constructor(options: RemoteTrustRootsOptions = {}) {
    this.#options = options;
    const maxRoots = options.maxRoots ?? 64;
    this.#cache =
      options.cacheDir === undefined
        ? undefined
        : new TufMetadataCache({ dir: join(options.cacheDir, 'remote'), maxEntries: maxRoots });
    this.#outbound = new OutboundNetwork({
      ...options.network,
      ...(options.privateHosts === undefined ? {} : { privateHosts: options.privateHosts }),
    });
    this.#queue = limiter(options.concurrency ?? 2);
  }

  /** The root of `spec`: the kept one, else loaded now (cache, then mirror). Throws a TrustRootError. */
  async load(spec: RemoteRootSpec): Promise<CompiledTrustRoot> {
    const key = keyOf(spec);
    let living = this.#roots.get(key);
    if (living === undefined) {
      living = this.#living(spec);
      this.#roots.set(key, living);
      // Oldest first: a Map iterates in insertion order.
      for (const oldest of this.#roots.keys()) {
        if (this.#roots.size <= (this.#options.maxRoots ?? 64)) break;
        this.#roots.delete(oldest);
      }
      if (!(await living.loadCache())) await living.refresh();
    } else if (living.current === undefined && this.#due(living)) {
      // Nothing yet, and the last try is a while ago: the mirror may be back.
      await living.refresh();
    }
    const current = living.current;
    if (current !== undefined) return current;
    // A refresh that leaves no root has failed, and says why.
    throw living.lastError as TrustRootError;
  }

  /** Refreshes every kept root; resolves to whether any changed. Never rejects. */
  async refresh(): Promise<boolean> {
    const changed = await Promise.all([...this.#roots.values()].map((root) => root.refresh()));
    return changed.some(Boolean);
  }

  /** When the first of the roots in use stops being trusted (its metadata expires), if any will. */
  earliestExpiry(): Date | undefined {
    const times = [...this.#roots.values()].flatMap((root) => root.expiresAt?.getTime() ?? []);
    return times.length === 0 ? undefined : new Date(Math.min(...times));
  }

  /**
   * Keeps only the roots of `trustRoots` (the TrustRoots that exist): the others are dropped, and
   * so are their cache entries, an earlier process's included. Never rejects.
   */
  async retain(trustRoots: readonly TrustRoot[]): Promise<void> {
    const keys = new Set<string>();
    const cacheKeys = new Set<string>();
    for (const trustRoot of trustRoots) {
      if (trustRoot.spec.remote === undefined) continue;
      let spec: RemoteRootSpec;
      try {
        spec = remoteRootSpec(trustRoot.metadata.name, trustRoot.spec.remote);
      } catch {
        continue;
      }
      keys.add(keyOf(spec));
      cacheKeys.add(LivingTrustRoot.cacheKey(spec));
    }
    for (const key of [...this.#roots.keys()]) if (!keys.has(key)) this.#roots.delete(key);
    await this.#cache?.retain(cacheKeys);
  }

  #due(living: LivingTrustRoot): boolean {
    const now = (this.#options.clock ?? (() => new Date()))().getTime();
    return now - living.lastAttemptAt >= (this.#options.retryAfterMs ?? 30_000);
  }

  #living(spec: RemoteRootSpec): LivingTrustRoot {
    const { client, timeoutMs, clock, onEvent } = this.#options;
    return new LivingTrustRoot({
      name: spec.name,
      origin: 'remote',
      mirror: spec.mirror,
      root: spec.root,
      target: spec.target,
      files: httpFiles({ outbound: this.#outbound }),
      queue: this.#queue,
      ...(this.#cache === undefined ? {} : { cache: this.#cache }),
      ...(client === undefined ? {} : { client }),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(clock === undefined ? {} : { clock }),
      ...(onEvent === undefined ? {} : { onEvent }),
    });
  }
}

function keyOf(spec: RemoteRootSpec): string {
  return `${spec.name}\0${LivingTrustRoot.cacheKey(spec)}`;
}

/** Runs at most `concurrency` tasks at once, the others in order of arrival. */
function limiter(concurrency: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
    running += 1;
    try {
      return await task();
    } finally {
      running -= 1;
      waiting.shift()?.();
    }
  };
}
