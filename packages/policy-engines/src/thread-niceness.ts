// A worker thread lowering its own CPU priority, so that the thread that started it (an event
// loop answering cheap requests) is scheduled first when both want a core. Linux keeps a nice
// value per thread: os.setPriority with the thread's own id (which /proc/thread-self names)
// changes this thread only. Best effort: where /proc/thread-self does not exist (not Linux) or the
// change is refused, the thread keeps the priority it has. Exported as
// `@signet/policy-engines/thread-priority` for every worker thread Signet starts (the engines', the
// verifier's CEL workers, the webhook's body check), each of which imports only this file.

import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** The highest nice value (the lowest priority) Linux has. */
const LOWEST = 19;

/**
 * Adds `increment` to the calling thread's nice value (at most 19); never raises its priority.
 * Returns the nice value the thread has now, or `undefined` when it could not be changed.
 * Call it from a worker thread only: on the main thread it would lower the event loop itself.
 */
export function lowerThreadPriority(increment: number): number | undefined {
  if (!(increment > 0)) return undefined;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isSafeInteger(tid) || tid <= 0) return undefined;
    const niceness = Math.min(LOWEST, getPriority(tid) + Math.floor(increment));
    setPriority(tid, niceness);
    return niceness;
  } catch {
    return undefined;
  }
}
