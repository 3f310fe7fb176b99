// One description per flag: it drives parsing (node:util parseArgs), `--help` and the README's
// flag tables (`pnpm --filter @signet/webhook docs:flags`), so the three never disagree.
import { parseArgs } from 'node:util';
import { UsageError } from '../errors.js';
import { didYouMean } from './suggest.js';

export interface FlagSpec {
  readonly name: string;
  readonly type: 'string' | 'boolean';
  /** May be given several times; the values are collected in order. */
  readonly multiple?: boolean;
  readonly short?: string;
  /** Other spellings accepted for the same flag (`--policy` for `--policy-file`). */
  readonly aliases?: readonly string[];
  /** Old spellings still accepted, with a warning naming the new one (`--namespace` of `serve`). */
  readonly deprecatedAliases?: readonly string[];
  /** Placeholder of the value in help: `FILE`, `HOST:PORT`. */
  readonly value?: string;
  /** The default, as the user would write it (shown in help; applied by the command). */
  readonly default?: string;
  /** The values it takes, when they are a closed set (offered by shell completion). */
  readonly choices?: readonly string[];
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
  /** The first positional, when it is one of a closed set (`migrate check`, `completion bash`). */
  readonly actions?: readonly string[];
}

export type FlagValues = Record<string, string | boolean | string[] | undefined>;

export interface ParsedCommandLine {
  readonly values: FlagValues;
  readonly positionals: string[];
  /** Deprecated spellings used, one line each, for stderr. */
  readonly warnings: readonly string[];
}

const HELP: FlagSpec = { name: 'help', type: 'boolean', short: 'h', description: 'print this help' };

/** Every flag of `command`, `--help` included. */
export function flagsOf(command: CommandSpec): readonly FlagSpec[] {
  return [...command.flags, HELP];
}

interface Token {
  readonly kind: string;
  readonly name?: string;
  readonly rawName?: string;
  readonly value?: string | undefined;
  readonly inlineValue?: boolean | undefined;
  readonly index?: number;
}

type ParseArgsOptions = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;

/** Every spelling of a flag (name, aliases, deprecated aliases). */
function spellings(flag: FlagSpec): string[] {
  return [flag.name, ...(flag.aliases ?? []), ...(flag.deprecatedAliases ?? [])];
}

/** node's parseArgs options: every flag under each of its spellings. */
function parseArgsOptions(flags: readonly FlagSpec[]): ParseArgsOptions {
  const options: ParseArgsOptions = {};
  for (const flag of flags) {
    for (const name of spellings(flag)) {
      options[name] = {
        type: flag.type,
        ...(flag.multiple ? { multiple: true } : {}),
        ...(flag.short && name === flag.name ? { short: flag.short } : {}),
      };
    }
  }
  return options;
}

/** What the other commands are, so that a flag given to the wrong one can say where it belongs. */
export interface ParseContext {
  readonly commands?: readonly CommandSpec[];
}

/**
 * Parses `args` against `command`'s flags. Aliases are folded into the canonical name (values of
 * a repeatable flag are kept in command-line order). Throws `UsageError` with one line naming the
 * problem, and for a mistyped flag the one it probably is.
 */
export function parseCommandLine(
  command: CommandSpec,
  args: readonly string[],
  context: ParseContext = {},
): ParsedCommandLine {
  const flags = flagsOf(command);
  const canonical = new Map<string, FlagSpec>();
  for (const flag of flags) for (const name of spellings(flag)) canonical.set(name, flag);
  // Not strict: node's own messages are not the CLI's (no suggestion, a quote left open); every
  // check parseArgs would make is made below, token by token.
  const parsed = parseArgs({
    args: [...args],
    options: parseArgsOptions(flags),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: FlagValues = {};
  const warnings: string[] = [];
  // Tokens keep the command line's order across aliases, and show a flag given twice.
  for (const token of parsed.tokens) {
    if (token.kind === 'positional' && !command.positionals)
      throw new UsageError(`takes no arguments, got ${JSON.stringify(token.value)}`);
    if (token.kind !== 'option') continue;
    const flag = canonical.get(token.name ?? '');
    const raw = token.rawName ?? `--${token.name}`;
    if (flag === undefined) throw unknownFlag(spelledAs(raw, args[token.index ?? -1]), command, context);
    checkValue(flag, token, raw);
    if (flag.deprecatedAliases?.includes(token.name ?? ''))
      warnings.push(`${raw} is deprecated; use --${flag.name}`);
    collect(values, flag, token.value);
  }
  return { values, positionals: parsed.positionals, warnings };
}

/**
 * How the user wrote an unknown flag: `-policy-file` (Go's single-dash spelling, as
 * policy-controller's flags are written) is read by parseArgs as a group of short flags, of which
 * `-p` is the unknown one; the whole word is what to suggest a correction for.
 */
function spelledAs(raw: string, arg: string | undefined): string {
  if (arg === undefined || arg.startsWith('--') || !/^-[A-Za-z][A-Za-z0-9-]+/.test(arg)) return raw;
  return arg.split('=')[0] as string;
}

function unknownFlag(raw: string, command: CommandSpec, context: ParseContext): UsageError {
  const word = raw.replace(/^--?/, '');
  const names = flagsOf(command).flatMap((f) => spellings(f).map((n) => `--${n}`));
  const suggestion = didYouMean(`--${word}`, names);
  if (suggestion !== '') return new UsageError(`unknown flag ${raw}${suggestion}`);
  const owners = (context.commands ?? [])
    .filter((c) => c !== command && c.flags.some((f) => spellings(f).includes(word)))
    .map((c) => c.name);
  const where = owners.length > 0 ? ` (a flag of ${listed(owners)}, not of ${command.name})` : '';
  return new UsageError(`unknown flag ${raw}${where}`);
}

/** `a`, `a and b`, `a, b and c`. */
function listed(words: readonly string[]): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

function checkValue(flag: FlagSpec, token: Token, raw: string): void {
  if (flag.type === 'boolean') {
    if (token.value !== undefined)
      throw new UsageError(`${raw} takes no value, got ${JSON.stringify(token.value)}`);
    return;
  }
  if (token.value === undefined)
    throw new UsageError(`${raw} needs a value${flag.value ? ` (${flag.value})` : ''}`);
  // `--output -q`: the value was probably forgotten; a value that starts with a dash is written inline.
  if (!token.inlineValue && token.value.length > 1 && token.value.startsWith('-'))
    throw new UsageError(
      `${raw} needs a value, got the flag ${token.value} (if that is the value, write ${raw}=${token.value})`,
    );
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

function label(flag: FlagSpec): string {
  const names = [flag.name, ...(flag.aliases ?? [])].map((n) => `--${n}`).join(', ');
  const short = flag.short ? `-${flag.short}, ` : '';
  return `${short}${names}${flag.value ? ` ${flag.value}` : ''}`;
}

function meaning(flag: FlagSpec): string {
  const repeat = flag.multiple ? ' (repeatable)' : '';
  const fallback = flag.default === undefined ? '' : ` (default ${flag.default})`;
  return `${flag.description}${repeat}${fallback}${deprecation(flag)}`;
}

function deprecation(flag: FlagSpec): string {
  const old = flag.deprecatedAliases ?? [];
  return old.length === 0 ? '' : ` (${old.map((n) => `--${n}`).join(', ')}: deprecated spelling)`;
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
  if (command.flags.length === 0) return 'No flags besides `--help`.';
  const rows = command.flags.map((flag) => [
    `\`${label(flag)}\`${flag.multiple ? ' (repeatable)' : ''}`,
    flag.default === undefined ? '' : `\`${flag.default}\``,
    `${flag.description}${deprecation(flag)}`.replaceAll('|', '\\|'),
  ]);
  const header = ['Flag', 'Default', 'Meaning'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
