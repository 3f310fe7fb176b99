// `signet completion bash`, sourced by a real bash and asked what it would complete.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

async function script(shell: string): Promise<string> {
  const stdout = new Capture();
  const stderr = new Capture();
  expect(await main(['completion', shell], { stdout, stderr })).toBe(0);
  expect(stderr.text).toBe('');
  return stdout.text;
}

const dir = mkdtempSync(join(tmpdir(), 'signet-completion-'));
writeFileSync(join(dir, 'policy.yaml'), '');
writeFileSync(join(dir, 'pod.yaml'), '');

/** What bash completes for `line` (the cursor at its end), with the script sourced. */
async function complete(line: string): Promise<string[]> {
  const path = join(dir, 'signet.bash');
  writeFileSync(path, await script('bash'));
  const words = line.split(' ');
  const program = [
    `source ${JSON.stringify(path)}`,
    `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})`,
    `COMP_CWORD=${words.length - 1}`,
    `COMP_LINE=${JSON.stringify(line)}`,
    `COMP_POINT=${line.length}`,
    'complete -p signet >/dev/null',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's own expansions.
    '_signet signet "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's own expansions.
    'printf "%s\\n" "${COMPREPLY[@]}"',
  ].join('\n');
  const out = execFileSync('bash', ['--norc', '--noprofile', '-c', program], { cwd: dir, encoding: 'utf8' });
  return out.split('\n').filter((l) => l !== '');
}

describe('signet completion bash, in a real bash', () => {
  it('completes commands, flags, formats, actions and file names', async () => {
    expect(await complete('signet ver')).toEqual(['verify']);
    expect(await complete('signet ')).toEqual(
      expect.arrayContaining(['serve', 'verify', 'audit', 'migrate', 'completion']),
    );
    expect(await complete('signet verify --pol')).toEqual(['--policy-file', '--policy']);
    expect(await complete('signet serve --signet')).toEqual(['--signet-namespace']);
    expect(await complete('signet audit -o ')).toEqual(['table', 'json', 'yaml']);
    expect(await complete('signet verify --output j')).toEqual(['json']);
    expect(await complete('signet serve --log-level w')).toEqual(['warn']);
    expect(await complete('signet migrate ch')).toEqual(['check']);
    expect(await complete('signet completion ')).toEqual(['bash', 'zsh']);
    expect(await complete('signet verify -f po')).toEqual(['pod.yaml', 'policy.yaml'].sort());
    expect(await complete('signet verify --policy-file pol')).toEqual(['policy.yaml']);
    // A flag that takes a free value completes nothing rather than a flag name.
    expect(await complete('signet audit --concurrency ')).toEqual([]);
  });

  it('offers every flag of every command', async () => {
    const { COMMANDS } = await import('../../src/cli/main.js');
    for (const command of COMMANDS) {
      const offered = await complete(`signet ${command.name} --`);
      for (const flag of command.flags) expect(offered, command.name).toContain(`--${flag.name}`);
    }
  });
});

describe('signet completion zsh', () => {
  it('runs the same function through bashcompinit', async () => {
    const zsh = await script('zsh');
    expect(zsh).toContain('autoload -U +X bashcompinit && bashcompinit');
    expect(zsh).toContain(
      (await script('bash'))
        .split('\n')
        .filter((l) => !l.startsWith('#'))
        .join('\n'),
    );
  });
});
