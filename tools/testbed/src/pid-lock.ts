// Lock files shared by every process that builds or installs into the cache (turbo runs several
// test packages at once, each of which may prepare tools): a file created exclusively, holding its
// owner's pid and what it is doing. A lock whose process is gone is taken over, so a killed build
// never blocks the next run.
import { open, readFile, rm, stat } from 'node:fs/promises';

/** Who holds a lock, from its file. */
export interface LockOwner {
  readonly pid: number;
  /** What the owner is doing (a tool name), for progress lines. */
  readonly label: string;
}

/** Releases a lock: removes its file. Idempotent. */
export type ReleaseLock = () => Promise<void>;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function olderThan(path: string, ms: number): Promise<boolean> {
  try {
    return Date.now() - (await stat(path)).mtimeMs > ms;
  } catch {
    return true;
  }
}

/** The owner of the lock at `path`, or undefined when there is none. */
export async function lockOwner(path: string): Promise<LockOwner | undefined> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const [pid = '', ...label] = text.split(' ');
  return { pid: Number.parseInt(pid, 10), label: label.join(' ').trim() };
}

/**
 * Takes the lock at `path` if it is free (or its owner is gone) and returns its release; returns
 * undefined while another live process holds it.
 */
export async function tryLock(path: string, label: string): Promise<ReleaseLock | undefined> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const handle = await open(path, 'wx');
      await handle.writeFile(`${process.pid} ${label}`);
      await handle.close();
      let released = false;
      return async () => {
        if (released) return;
        released = true;
        await rm(path, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = await lockOwner(path);
    if (owner === undefined) continue; // released between our open and our read
    // A lock without a pid may be one being written this instant: only an old one is taken over.
    const stale = Number.isInteger(owner.pid) ? !isAlive(owner.pid) : await olderThan(path, 10_000);
    if (!stale) return undefined;
    await rm(path, { force: true });
  }
  return undefined;
}

/** Whether a live process other than this one holds the lock at `path`. */
export async function heldElsewhere(path: string): Promise<boolean> {
  const owner = await lockOwner(path);
  return (
    owner !== undefined && Number.isInteger(owner.pid) && owner.pid !== process.pid && isAlive(owner.pid)
  );
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
