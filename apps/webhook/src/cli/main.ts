// The `signet` command: `signet serve` runs the admission webhook, `signet verify` checks an image
// or a manifest against policy YAML from a shell, `signet audit` judges what runs in a cluster,
// `signet migrate check` finds what blocks a move from policy-controller.
import type { Writable } from 'node:stream';
import { AUDIT_COMMAND } from '../commands/audit.js';
import { MIGRATE_COMMAND } from '../commands/migrate.js';
import { SERVE_COMMAND } from '../commands/serve-config.js';
import { VERIFY_COMMAND } from '../commands/verify.js';
import { NoClusterError, UsageError, userMessage } from '../errors.js';
import { version } from '../version.js';
import { noClusterHint } from './cluster-hint.js';
import type { Command } from './command.js';
import { COMPLETION_COMMAND } from './completion.js';
import { type FlagValues, helpText, parseCommandLine } from './flags.js';
import { didYouMean } from './suggest.js';

export { version };

export const COMMANDS: readonly Command[] = [
  SERVE_COMMAND,
  VERIFY_COMMAND,
  AUDIT_COMMAND,
  MIGRATE_COMMAND,
  COMPLETION_COMMAND,
];

/** What may follow `signet` besides a command. */
const TOP_LEVEL = ['--help', '-h', 'help', '--version', 'version'];

function usage(): string {
  const lines = COMMANDS.map((c) => `  signet ${c.name} ${c.synopsis}`);
  return `usage:\n${lines.join('\n')}\n  signet --version\n\nRun 'signet COMMAND --help' for a command's flags.`;
}

export interface Streams {
  readonly stdout: Writable;
  readonly stderr: Writable;
}

/** Runs the command line; returns the exit code. Errors a user can act on print one line. */
export async function main(
  argv: readonly string[],
  streams: Streams = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const [name, ...rest] = argv;
  const print = (text: string, code: number) => {
    (code === 0 ? streams.stdout : streams.stderr).write(`${text}\n`);
    return code;
  };
  if (name === undefined) return print(usage(), 2);
  if (name === '--help' || name === '-h' || name === 'help') return print(usage(), 0);
  if (name === '--version' || name === 'version') return print(`signet ${version()}`, 0);
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) {
    const guess = didYouMean(name, [...COMMANDS.map((c) => c.name), ...TOP_LEVEL]);
    return print(`signet: unknown command ${JSON.stringify(name)}${guess}\n\n${usage()}`, 2);
  }
  let values: FlagValues = {};
  try {
    const parsed = parseCommandLine(command, rest, { commands: COMMANDS });
    values = parsed.values;
    for (const warning of parsed.warnings)
      streams.stderr.write(`signet ${command.name}: warning: ${warning}\n`);
    if (values.help) return print(helpText(command), 0);
    return await command.run({
      positionals: parsed.positionals,
      values,
      stdout: streams.stdout,
      stderr: streams.stderr,
      env: process.env,
      commands: COMMANDS,
    });
  } catch (error) {
    const message = userMessage(error);
    if (message === undefined) throw error;
    const hint =
      error instanceof UsageError
        ? `\nRun 'signet ${command.name} --help' for its flags.`
        : error instanceof NoClusterError
          ? noClusterHint(command.name, values)
          : '';
    return print(`signet ${command.name}: ${message}${hint}`, 2);
  }
}
