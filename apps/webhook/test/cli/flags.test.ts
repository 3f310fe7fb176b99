import { describe, expect, it } from 'vitest';
import { type CommandSpec, flagTable, helpText, parseCommandLine } from '../../src/cli/flags.js';
import { UsageError } from '../../src/errors.js';

const command: CommandSpec = {
  name: 'demo',
  summary: 'signet demo: a command for tests.',
  synopsis: 'THING [flags]',
  positionals: true,
  flags: [
    {
      name: 'policy-file',
      type: 'string',
      multiple: true,
      aliases: ['policy'],
      value: 'FILE',
      description: 'policies',
    },
    { name: 'output', type: 'string', value: 'FORMAT', default: 'text', description: 'text | json' },
    { name: 'quiet', type: 'boolean', short: 'q', description: 'say less' },
    {
      name: 'signet-namespace',
      type: 'string',
      deprecatedAliases: ['namespace'],
      value: 'NS',
      description: "Signet's namespace",
    },
  ],
};

const other: CommandSpec = {
  ...command,
  name: 'other',
  flags: [{ name: 'kubeconfig', type: 'string', value: 'PATH', description: 'a cluster' }],
};

function usageError(args: readonly string[], spec: CommandSpec = command): string {
  try {
    parseCommandLine(spec, args, { commands: [command, other] });
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`${args.join(' ')} was accepted`);
}

describe('parseCommandLine', () => {
  it('folds aliases into the canonical flag, in order, and keeps positionals', () => {
    const parsed = parseCommandLine(command, ['x', '--policy', 'a.yaml', '--policy-file=b.yaml', '-q']);
    expect(parsed).toEqual({
      values: { 'policy-file': ['a.yaml', 'b.yaml'], quiet: true },
      positionals: ['x'],
      warnings: [],
    });
  });

  it('accepts a deprecated spelling with a warning naming the new one', () => {
    expect(parseCommandLine(command, ['--namespace', 'ops'])).toEqual({
      values: { 'signet-namespace': 'ops' },
      positionals: [],
      warnings: ['--namespace is deprecated; use --signet-namespace'],
    });
  });

  it('says in its own words what is wrong, with the flag a typo probably meant', () => {
    expect(usageError(['--polcy', 'a.yaml'])).toBe('unknown flag --polcy (did you mean --policy?)');
    expect(usageError(['--outptu=json'])).toBe('unknown flag --outptu (did you mean --output?)');
    expect(usageError(['--quie'])).toBe('unknown flag --quie (did you mean --quiet?)');
    expect(usageError(['--kubeconfig', 'k'])).toBe(
      'unknown flag --kubeconfig (a flag of other, not of demo)',
    );
    expect(usageError(['--zzz'])).toBe('unknown flag --zzz');
    expect(usageError(['-x'])).toBe('unknown flag -x');
    // Go's single-dash spelling (policy-controller's flags), read by parseArgs as short flags.
    expect(usageError(['-policy-file', 'p'])).toBe('unknown flag -policy-file (did you mean --policy-file?)');
    expect(usageError(['-quiet'])).toBe('unknown flag -quiet (did you mean --quiet?)');
    expect(usageError(['--output'])).toBe('--output needs a value (FORMAT)');
    expect(usageError(['--output', '-q'])).toBe(
      '--output needs a value, got the flag -q (if that is the value, write --output=-q)',
    );
    expect(usageError(['--quiet=yes'])).toBe('--quiet takes no value, got "yes"');
    expect(usageError(['x'], { ...command, positionals: false })).toBe('takes no arguments, got "x"');
    expect(parseCommandLine(command, ['--output=-q']).values).toEqual({ output: '-q' });
    expect(parseCommandLine(command, ['--', '--not-a-flag']).positionals).toEqual(['--not-a-flag']);
  });

  it('refuses unknown flags, missing values and a single-valued flag given twice, in one line', () => {
    for (const args of [['--nope'], ['--output'], ['--output', 'a', '--output', 'b'], ['-nope']]) {
      const error = (() => {
        try {
          parseCommandLine(command, args);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error, args.join(' ')).toBeInstanceOf(UsageError);
      expect((error as Error).message).not.toContain('\n');
    }
    expect(() => parseCommandLine({ ...command, positionals: false }, ['x'])).toThrow(UsageError);
  });
});

describe('help and README tables come from the same definitions', () => {
  it('prints every flag with its value, default and repeatability', () => {
    const help = helpText(command);
    expect(help).toContain('usage: signet demo THING [flags]');
    expect(help).toMatch(/--policy-file, --policy FILE\s+policies \(repeatable\)/);
    expect(help).toMatch(/--output FORMAT\s+text \| json \(default text\)/);
    expect(help).toMatch(/-q, --quiet\s+say less/);
    expect(help).toMatch(/-h, --help\s+print this help/);
    expect(help).toMatch(/--signet-namespace NS\s+Signet's namespace \(--namespace: deprecated spelling\)/);
  });

  it('renders an aligned Markdown table with escaped pipes', () => {
    const lines = flagTable(command).split('\n');
    expect(lines[0]).toMatch(/^\| Flag +\| Default \| Meaning +\|$/);
    expect(lines.some((l) => /^\| `--output FORMAT` +\| `text` +\| text \\\| json +\|$/.test(l))).toBe(true);
    expect(new Set(lines.map((l) => l.length)).size).toBe(1);
  });
});
