// The on-disk cache of TUF metadata: per trust root (by key), the metadata and target that tuf-js
// verified in its last update, so a rotated root survives restarts and a restart with the mirror
// down still has a root. Only what a TUF client returned as verified is ever written here, whole
// (written beside, then renamed into place); what a TrustRoot names but never verified is never
// written at all. Bounded: an entry larger than `maxEntryBytes` is not kept, and after each write
// the oldest entries go until at most `maxEntries` and `maxBytes` remain. `retain` removes the
// entries of trust roots that are gone, those left by an earlier process included.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface TufCacheOptions {
  readonly dir: string;
  /** Entries kept (default 64). */
  readonly maxEntries?: number;
  /** Bytes of all entries together (default 16 MiB). */
  readonly maxBytes?: number;
  /** Bytes of one entry; a larger one is not kept (default 4 MiB). */
  readonly maxEntryBytes?: number;
}

const MiB = 1024 * 1024;
/** Entry directories: the hex keys trust roots are cached under. */
const KEY = /^[0-9a-f]{16,64}$/;
/** Files of an entry: TUF metadata (`root.json`, delegated roles) and `targets/<target>`. */
const FILE = /^(targets\/)?[A-Za-z0-9%._-]+$/;

/** Whether `path` may be a file of an entry (no directories, no `..`). */
export function isCacheFilePath(path: string): boolean {
  return FILE.test(path) && !path.split('/').some((part) => part === '.' || part === '..');
}

export class TufMetadataCache {
  readonly dir: string;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #maxEntryBytes: number;
  /** Writes and prunes run one at a time. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: TufCacheOptions) {
    this.dir = options.dir;
    this.#maxEntries = options.maxEntries ?? 64;
    this.#maxBytes = options.maxBytes ?? 16 * MiB;
    this.#maxEntryBytes = Math.min(options.maxEntryBytes ?? 4 * MiB, this.#maxBytes);
  }

  /** The files of `key`'s entry, or `undefined` when there is none (or it cannot be read). */
  async read(key: string): Promise<ReadonlyMap<string, Buffer> | undefined> {
    if (!KEY.test(key)) return undefined;
    const root = join(this.dir, key);
    const files = new Map<string, Buffer>();
    try {
      let total = 0;
      for (const path of await filesOf(root)) {
        const data = await readFile(join(root, path));
        total += data.length;
        if (total > this.#maxEntryBytes) return undefined;
        files.set(path, data);
      }
    } catch {
      return undefined;
    }
    return files.size === 0 ? undefined : files;
  }

  /**
   * Replaces `key`'s entry with `files` (verified metadata), then drops the oldest entries over
   * the bounds. Resolves to whether the entry was kept; never rejects (a cache that cannot be
   * written costs a fetch after a restart, nothing else).
   */
  write(key: string, files: ReadonlyMap<string, Buffer>): Promise<boolean> {
    return this.#serial(async () => {
      const size = [...files.values()].reduce((sum, data) => sum + data.length, 0);
      const paths = [...files.keys()];
      if (!KEY.test(key) || size > this.#maxEntryBytes || !paths.every(isCacheFilePath)) return false;
      const staging = join(this.dir, `.write-${randomBytes(6).toString('hex')}`);
      try {
        await mkdir(join(staging, 'targets'), { recursive: true });
        for (const [path, data] of files) await writeFile(join(staging, path), data);
        await rm(join(this.dir, key), { recursive: true, force: true });
        await rename(staging, join(this.dir, key));
      } catch {
        await rm(staging, { recursive: true, force: true }).catch(() => undefined);
        return false;
      }
      await this.#bound(key);
      return true;
    });
  }

  /** Removes every entry whose key is not in `keys`, and what an interrupted write left. */
  retain(keys: Iterable<string>): Promise<void> {
    const keep = new Set(keys);
    return this.#serial(async () => {
      for (const name of await readdir(this.dir).catch(() => [])) {
        if ((KEY.test(name) && !keep.has(name)) || name.startsWith('.write-')) {
          await rm(join(this.dir, name), { recursive: true, force: true });
        }
      }
    });
  }

  /**
   * Drops the least recently written entries (never `written`) until the bounds hold. An entry
   * that vanishes meanwhile is skipped; the bounds are enforced again at the next write.
   */
  async #bound(written: string): Promise<void> {
    const entries: { key: string; size: number; mtime: number }[] = [];
    for (const key of (await readdir(this.dir)).filter((name) => KEY.test(name))) {
      const root = join(this.dir, key);
      let size = 0;
      try {
        for (const path of await filesOf(root)) size += (await stat(join(root, path))).size;
        entries.push({ key, size, mtime: (await stat(root)).mtimeMs });
      } catch {
        // Removed meanwhile (by hand): nothing to count.
      }
    }
    entries.sort((a, b) => a.mtime - b.mtime);
    let total = entries.reduce((sum, entry) => sum + entry.size, 0);
    let count = entries.length;
    for (const entry of entries) {
      if (count <= this.#maxEntries && total <= this.#maxBytes) break;
      if (entry.key === written) continue;
      await rm(join(this.dir, entry.key), { recursive: true, force: true });
      count -= 1;
      total -= entry.size;
    }
  }

  #serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.then(settled, settled);
    return run;
  }
}

/** The queue moves on whatever a task did. */
function settled(): void {}

/** The files of an entry directory: its own and those in `targets/`. */
async function filesOf(root: string): Promise<string[]> {
  const top = await readdir(root, { withFileTypes: true });
  const files = top.filter((entry) => entry.isFile()).map((entry) => entry.name);
  if (top.some((entry) => entry.isDirectory() && entry.name === 'targets')) {
    const targets = await readdir(join(root, 'targets'), { withFileTypes: true });
    files.push(...targets.filter((entry) => entry.isFile()).map((entry) => `targets/${entry.name}`));
  }
  return files;
}
