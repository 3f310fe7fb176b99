// The `remote` TrustRoots of a cluster as living roots: one per TrustRoot (by name and spec), kept
// across policy compiles so a remote root is fetched once, then refreshed on the caller's
// schedule rather than on every policy change, and survives a mirror outage with its last good
// content. Bounded: TrustRoots no longer present are dropped by `retain`, and at most `maxRoots`
// are kept.
import { createHash } from 'node:crypto';
import type { TrustRootRemote } from '@signet/k8s-types';
import type { TrustRootError } from './errors.js';
import { type LivingRootEvent, LivingTrustRoot } from './living-root.js';
import type { CompiledTrustRoot } from './trusted-root.js';
import type { TufClient } from './tuf-client.js';

export interface RemoteTrustRootsOptions {
  readonly cacheDir?: string;
  readonly client?: TufClient;
  readonly timeoutMs?: number;
  readonly clock?: () => Date;
  readonly onEvent?: (event: LivingRootEvent) => void;
  readonly maxRoots?: number;
}

/** What a remote TrustRoot needs to be fetched: already checked and decoded by the loader. */
export interface RemoteRootSpec {
  readonly name: string;
  readonly remote: TrustRootRemote;
  readonly mirror: string;
  readonly root: Buffer;
  readonly target: string;
}

export class RemoteTrustRoots {
  readonly #options: RemoteTrustRootsOptions;
  readonly #roots = new Map<string, LivingTrustRoot>();

  constructor(options: RemoteTrustRootsOptions = {}) {
    this.#options = options;
  }

  /** The root of `spec`: the kept one, else loaded now (cache, then mirror). Throws a TrustRootError. */
  async load(spec: RemoteRootSpec): Promise<CompiledTrustRoot> {
    const key = keyOf(spec);
    let living = this.#roots.get(key);
    if (living === undefined) {
      living = new LivingTrustRoot({
        name: spec.name,
        origin: 'remote',
        mirror: spec.mirror,
        root: spec.root,
        target: spec.target,
        ...this.#living(),
      });
      this.#roots.set(key, living);
      // Oldest first: a Map iterates in insertion order.
      for (const oldest of this.#roots.keys()) {
        if (this.#roots.size <= (this.#options.maxRoots ?? 64)) break;
        this.#roots.delete(oldest);
      }
      if (!(await living.loadCache())) await living.refresh();
    }
    const current = living.current;
    if (current !== undefined) return current;
    // Nothing yet: try again now rather than wait for the schedule (the mirror may be back).
    await living.refresh();
    if (living.current !== undefined) return living.current;
    // A refresh that leaves no root has failed, and says why.
    throw living.lastError as TrustRootError;
  }

  /** Refreshes every kept root; resolves to whether any changed. Never rejects. */
  async refresh(): Promise<boolean> {
    const changed = await Promise.all([...this.#roots.values()].map((root) => root.refresh()));
    return changed.some(Boolean);
  }

  /** Drops roots whose TrustRoot is gone (names of the TrustRoots that exist). */
  retain(names: Iterable<string>): void {
    const keep = new Set(names);
    for (const [key, root] of this.#roots) if (!keep.has(root.name)) this.#roots.delete(key);
  }

  #living() {
    const { maxRoots: _, ...options } = this.#options;
    return options;
  }
}

function keyOf(spec: RemoteRootSpec): string {
  return createHash('sha256')
    .update(JSON.stringify([spec.name, spec.mirror, spec.target]))
    .update(spec.root)
    .digest('hex');
}
