// One description per flag: it drives parsing (node:util parseArgs), `--help` and the README's
// flag tables (`pnpm --filter @signet/webhook docs:flags`), so the three never disagree.
import { parseArgs } from 'node:util';
import { UsageError } from '../errors.js';

export interface FlagSpec {
  readonly name: string;
  readonly type: 'string' | 'boolean';
  /** May be given several times; the values are collected in order. */
  readonly multiple?: boolean;
  readonly short?: string;
  /** Other spellings accepted for the same flag (`--policy` for `--policy-file`). */
  readonly aliases?: readonly string[];
  /** Placeholder of the value in help: `FILE`, `HOST:PORT`. */
  readonly value?: string;
  /** The default, as the user would write it (shown in help; applied by the command). */
  readonly default?: string;
  readonly description: string;
}

/** A command's definition: what it is for, how it is called, and its flags. */
export interface CommandSpec {
  readonly name: string;
  readonly summary: string;
  /** `IMAGE --policy-file FILE [flags]`. */
  readonly synopsis: string;
  readonly flags: readonly FlagSpec[];
  /** Whether the command takes positional arguments. */
  readonly positionals: boolean;
}

export type FlagValues = Record<string, string | boolean | string[] | undefined>;

export interface ParsedCommandLine {
  readonly values: FlagValues;
  readonly positionals: string[];
}

const HELP: FlagSpec = { name: 'help', type: 'boolean', short: 'h', description: 'print this help' };

/** Every flag of `command`, `--help` included. */
export function flagsOf(command: CommandSpec): readonly FlagSpec[] {
  return [...command.flags, HELP];
}

interface Token {
  readonly kind: string;
  readonly name?: string;
  readonly value?: string | undefined;
}

type ParseArgsOptions = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;

/** node's parseArgs options: every flag under its name and each of its aliases. */
function parseArgsOptions(flags: readonly FlagSpec[]): ParseArgsOptions {
  const options: ParseArgsOptions = {};
  for (const flag of flags) {
    for (const name of [flag.name, ...(flag.aliases ?? [])]) {
      options[name] = {
        type: flag.type,
        ...(flag.multiple ? { multiple: true } : {}),
        ...(flag.short && name === flag.name ? { short: flag.short } : {}),
      };
    }
  }
  return options;
}

/**
 * Parses `args` against `command`'s flags. Aliases are folded into the canonical name (values of
 * a repeatable flag are kept in command-line order). Throws `UsageError` with one line naming the
 * problem.
 */
export function parseCommandLine(command: CommandSpec, args: readonly string[]): ParsedCommandLine {
  const flags = flagsOf(command);
  const canonical = new Map<string, FlagSpec>();
  for (const flag of flags)
    for (const name of [flag.name, ...(flag.aliases ?? [])]) canonical.set(name, flag);
  let parsed: { tokens: readonly Token[]; positionals: string[] };
  try {
    parsed = parseArgs({
      args: [...args],
      options: parseArgsOptions(flags),
      strict: true,
      allowPositionals: command.positionals,
      tokens: true,
    });
  } catch (error) {
    throw new UsageError(oneLine((error as Error).message));
  }
  // Tokens keep the command line's order across aliases, and show a flag given twice.
  const values: FlagValues = {};
  for (const token of parsed.tokens) {
    const flag = token.kind === 'option' ? canonical.get(token.name ?? '') : undefined;
    if (flag !== undefined) collect(values, flag, token.value);
  }
  return { values, positionals: parsed.positionals };
}

function collect(values: FlagValues, flag: FlagSpec, value: string | undefined): void {
  const current = values[flag.name];
  if (flag.multiple) {
    values[flag.name] = [...((current as string[] | undefined) ?? []), value ?? ''];
  } else if (current !== undefined) {
    throw new UsageError(`--${flag.name} is given more than once`);
  } else {
    values[flag.name] = flag.type === 'boolean' ? true : (value ?? '');
  }
}

/** node's parseArgs messages end with a hint on a second line; keep the first sentence. */
function oneLine(message: string): string {
  return message.split('\n')[0]?.replace(/\.$/, '') ?? message;
}

function label(flag: FlagSpec): string {
  const names = [flag.name, ...(flag.aliases ?? [])].map((n) => `--${n}`).join(', ');
  const short = flag.short ? `-${flag.short}, ` : '';
  return `${short}${names}${flag.value ? ` ${flag.value}` : ''}`;
}

function meaning(flag: FlagSpec): string {
  const repeat = flag.multiple ? ' (repeatable)' : '';
  const fallback = flag.default === undefined ? '' : ` (default ${flag.default})`;
  return `${flag.description}${repeat}${fallback}`;
}

/** The text `signet COMMAND --help` prints. */
export function helpText(command: CommandSpec): string {
  const flags = flagsOf(command);
  const width = Math.max(...flags.map((f) => label(f).length));
  const lines = flags.map((f) => `  ${label(f).padEnd(width)}  ${meaning(f)}`);
  return `${command.summary}\n\nusage: signet ${command.name} ${command.synopsis}\n\nflags:\n${lines.join('\n')}`;
}

/** The README's Markdown table of `command`'s flags (without `--help`). */
export function flagTable(command: CommandSpec): string {
  const rows = command.flags.map((flag) => [
    `\`${label(flag)}\`${flag.multiple ? ' (repeatable)' : ''}`,
    flag.default === undefined ? '' : `\`${flag.default}\``,
    flag.description.replaceAll('|', '\\|'),
  ]);
  const header = ['Flag', 'Default', 'Meaning'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
