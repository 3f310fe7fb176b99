// The root README's `pnpm signet ...` commands, run exactly as written (from the repository root),
// with the outcome the README states.
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';

const root = new URL('../../../', import.meta.url);
const readme = readFileSync(new URL('README.md', root), 'utf8');
const commands = [...readme.matchAll(/^pnpm signet (verify --resource .+)$/gm)].map((m) =>
  (m[1] as string).split(' '),
);
const audits = [...readme.matchAll(/^pnpm signet (audit -f .+)$/gm)].map((m) => (m[1] as string).split(' '));

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

describe("the root README's signet commands", () => {
  it('are there', () => {
    expect(commands).toHaveLength(2);
    expect(audits).toHaveLength(1);
  });

  it('audit -f prints the table the README shows and exits 1', async () => {
    const cwd = process.cwd();
    process.chdir(new URL('.', root).pathname);
    try {
      const stdout = new Capture();
      const stderr = new Capture();
      expect(await main([...(audits[0] as string[]), '-q'], { stdout, stderr })).toBe(1);
      expect(stderr.text).toBe('');
      expect(readme).toContain(`\`\`\`\n${stdout.text}\`\`\``);
    } finally {
      process.chdir(cwd);
    }
  });

  it.each([
    [0, 0, 'PASS policy "allow-system-images"', 'ADMITTED'],
    [1, 1, 'no ClusterImagePolicy matches (no-match-policy: deny)', 'DENIED'],
  ])('command %i exits %i and says what the README says', async (index, code, text, last) => {
    const cwd = process.cwd();
    process.chdir(new URL('.', root).pathname);
    try {
      const stdout = new Capture();
      const stderr = new Capture();
      expect(await main(commands[index] as string[], { stdout, stderr })).toBe(code);
      expect(stderr.text).toBe('');
      expect(stdout.text).toContain(text);
      expect(stdout.text.trimEnd().split('\n').at(-1)).toBe(last);
    } finally {
      process.chdir(cwd);
    }
  });
});
