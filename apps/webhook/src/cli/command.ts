// A command of the `signet` CLI: its grammar (flags.ts) and what it does, in one record, so that
// `main` finds a command by name and runs it without knowing any of them.
import type { Writable } from 'node:stream';
import type { CommandSpec, FlagValues } from './flags.js';

/** One run of a command: what the user gave, where it writes, and the CLI's other commands. */
export interface Invocation {
  readonly positionals: readonly string[];
  readonly values: FlagValues;
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly env: NodeJS.ProcessEnv;
  /** Every command of the CLI (`signet completion` describes them all). */
  readonly commands: readonly Command[];
}

export interface Command extends CommandSpec {
  /** Runs the command to its exit code; input it cannot use is an `InputError` (or `UsageError`). */
  run(invocation: Invocation): Promise<number> | number;
}
