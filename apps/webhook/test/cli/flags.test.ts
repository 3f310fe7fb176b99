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
  ],
};

describe('parseCommandLine', () => {
  it('folds aliases into the canonical flag, in order, and keeps positionals', () => {
    const parsed = parseCommandLine(command, ['x', '--policy', 'a.yaml', '--policy-file=b.yaml', '-q']);
    expect(parsed).toEqual({
      values: { 'policy-file': ['a.yaml', 'b.yaml'], quiet: true },
      positionals: ['x'],
    });
  });

  it('refuses unknown flags, missing values and a single-valued flag given twice, in one line', () => {
    for (const args of [['--nope'], ['--output'], ['--output', 'a', '--output', 'b']]) {
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
  });

  it('renders an aligned Markdown table with escaped pipes', () => {
    const lines = flagTable(command).split('\n');
    expect(lines[0]).toMatch(/^\| Flag +\| Default \| Meaning +\|$/);
    expect(lines.some((l) => /^\| `--output FORMAT` +\| `text` +\| text \\\| json +\|$/.test(l))).toBe(true);
    expect(new Set(lines.map((l) => l.length)).size).toBe(1);
  });
});
