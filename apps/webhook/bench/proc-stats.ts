// What Linux says about the server process: resident memory and CPU time, from /proc.
import { readdir, readFile } from 'node:fs/promises';

export interface MemoryStats {
  /** Resident set size now, MiB (`VmRSS`). */
  readonly rssMiB: number;
  /** Largest resident set size so far, MiB (`VmHWM`). */
  readonly peakMiB: number;
}

function kib(status: string, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
  if (match === null) throw new Error(`/proc status has no ${field} line`);
  return Number(match[1]);
}

export async function memoryOf(pid: number): Promise<MemoryStats> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return { rssMiB: kib(status, 'VmRSS') / 1024, peakMiB: kib(status, 'VmHWM') / 1024 };
}

// /proc/<pid>/stat counts in USER_HZ ticks, which Linux fixes at 100 per second for user space.
const TICKS_PER_SECOND = 100;

/**
 * User plus system CPU seconds the process has used; with `thread`, that thread's only (a
 * process's main thread, the one that runs its event loop, has the process's id).
 */
export async function cpuSecondsOf(pid: number, thread?: number): Promise<number> {
  const path = thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`;
  const stat = await readFile(path, 'utf8');
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** One thread of a process, as /proc/PID/task/TID says. */
export interface ThreadStats {
  readonly tid: number;
  /** The thread's name (`comm`, at most 15 characters): Node names its workers by their `name`. */
  readonly name: string;
  /** Its nice value (Linux keeps one per thread). */
  readonly nice: number;
  /** User plus system CPU seconds it has used. */
  readonly cpuSeconds: number;
}

/** The threads of `pid` alive now (one that ends while they are read is left out). */
export async function threadsOf(pid: number): Promise<ThreadStats[]> {
  const tids = await readdir(`/proc/${pid}/task`);
  const threads = await Promise.all(
    tids.map(async (tid): Promise<ThreadStats | undefined> => {
      try {
        const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        // nice is field 19 of the line, 17 after the name.
        return {
          tid: Number(tid),
          name,
          nice: Number(fields[16]),
          cpuSeconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND,
        };
      } catch {
        return undefined;
      }
    }),
  );
  return threads.filter((thread) => thread !== undefined);
}
