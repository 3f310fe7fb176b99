// What the benchmarks read of a process from /proc, and the median they report.
import { readFile } from 'node:fs/promises';

export interface ProcStats {
  /** Resident set size now, MiB (`VmRSS`). */
  readonly rssMiB: number;
  /** Largest resident set size so far, MiB (`VmHWM`). */
  readonly peakMiB: number;
  /** User plus system CPU seconds so far. */
  readonly cpuSeconds: number;
}

export async function procStats(pid: number): Promise<ProcStats> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? Number.NaN);
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces; the fields after its closing parenthesis do not. utime and
  // stime are fields 14 and 15, in USER_HZ ticks (100 per second for user space).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return {
    rssMiB: kib('VmRSS') / 1024,
    peakMiB: kib('VmHWM') / 1024,
    cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100,
  };
}

/** Seconds since `pid` started (`/proc/<pid>/stat` field 22 against `/proc/uptime`; 10 ms resolution). */
export async function ageSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const uptime = Number((await readFile('/proc/uptime', 'utf8')).split(' ')[0]);
  // starttime is field 22, in clock ticks since boot (100 per second).
  const startTicks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  return uptime - startTicks / 100;
}

export const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
