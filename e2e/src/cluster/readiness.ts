import type { ManagedProcess } from '@signet/testbed';
import { ClusterError } from './errors.js';
import type { ProgressReporter } from './progress.js';

/** `true` when the awaited state is reached, else what is still missing (shown in progress and errors). */
export type Check = () => Promise<true | string>;

export interface WaitOptions {
  /** Who is awaited, for progress lines and errors (`kwok`, `kube-controller-manager`, ...). */
  readonly component: string;
  /** What is awaited: `2 Nodes Ready`. */
  readonly what: string;
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  /** Programs that must keep running meanwhile; if one exits, the wait fails at once with its log. */
  readonly processes: readonly ManagedProcess[];
  /** Whose log tails a timeout shows (default: the process named `component`, else all). */
  readonly suspects?: readonly ManagedProcess[];
  readonly progress: ProgressReporter;
  readonly heartbeatMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Fails with the log tail of the first of `processes` that is no longer running. */
export async function assertRunning(processes: readonly ManagedProcess[]): Promise<void> {
  const gone = processes.find((process) => !process.running);
  if (!gone) return;
  const info = await gone.exited;
  throw new ClusterError(
    'COMPONENT_FAILED',
    `${gone.name} exited (code ${info.code}, signal ${info.signal}); log ${gone.logPath}:\n${await gone.logTail(40)}`,
  );
}

/** Polls `check` until it passes, reporting progress, failing fast when a program dies. */
export async function waitUntil(check: Check, options: WaitOptions): Promise<void> {
  const started = Date.now();
  const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
  const heartbeatMs = options.heartbeatMs ?? 5_000;
  let lastReport = started;
  let missing = 'not checked yet';
  options.progress.report(options.component, `waiting for ${options.what}`);
  for (;;) {
    await assertRunning(options.processes);
    const result = await check().catch((error: unknown) => `check failed: ${(error as Error).message}`);
    if (result === true) {
      options.progress.report(options.component, `${options.what} after ${seconds()}s`);
      return;
    }
    missing = result;
    if (Date.now() - started > options.timeoutMs) {
      throw new ClusterError(
        'NOT_READY',
        `${options.component}: ${options.what} not reached within ${options.timeoutMs} ms (${missing})\n` +
          (await logTails(options)),
      );
    }
    if (Date.now() - lastReport >= heartbeatMs) {
      lastReport = Date.now();
      options.progress.report(
        options.component,
        `still waiting for ${options.what} (${seconds()}s): ${missing}`,
      );
    }
    await sleep(options.intervalMs ?? 250);
  }
}

async function logTails(options: WaitOptions): Promise<string> {
  const named = options.processes.filter((process) => process.name === options.component);
  const suspects = options.suspects ?? (named.length > 0 ? named : options.processes);
  const tails = await Promise.all(
    suspects.map(async (process) => `--- ${process.name} (${process.logPath})\n${await process.logTail(25)}`),
  );
  return tails.join('\n');
}
