// The root README's `node_modules/.bin/signet ...` commands, run exactly as written (from the
// repository root, through a shell, on the built CLI), with the outcome the README states: the
// output is Signet's alone (no package manager's echo or ELIFECYCLE line on a denial).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../../', import.meta.url);
const readme = readFileSync(new URL('README.md', root), 'utf8');
const verifies = [...readme.matchAll(/^(node_modules\/\.bin\/signet verify -f .+)$/gm)].map(
  (m) => m[1] as string,
);
const audits = [...readme.matchAll(/^(node_modules\/\.bin\/signet audit -f .+)$/gm)].map(
  (m) => m[1] as string,
);

/** Runs `line` with sh in the repository root; a PATH without Node, so the bin must find its own. */
function shell(line: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'sh',
      ['-c', line],
      { cwd: new URL('.', root).pathname, env: { PATH: '/usr/bin:/bin', HOME: process.env.HOME ?? '/' } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

describe("the root README's signet commands", () => {
  it('are there, and none goes through pnpm', () => {
    expect(verifies).toHaveLength(2);
    expect(audits).toHaveLength(1);
    expect(readme).not.toMatch(/^pnpm (--silent )?signet /m);
  });

  it('audit -f prints the table the README shows and exits 1', async () => {
    const result = await shell(`${audits[0]} -q`);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    expect(readme).toContain(`\`\`\`\n${result.stdout}\`\`\``);
  });

  it.each([
    [0, 0, 'PASS policy "allow-system-images"', 'ADMITTED'],
    [1, 1, 'no ClusterImagePolicy matches (no-match-policy: deny)', 'DENIED'],
  ])('verify command %i exits %i and says what the README says', async (index, code, text, last) => {
    const result = await shell(verifies[index] as string);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(code);
    expect(result.stdout).toContain(text);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe(last);
    expect(result.stdout).not.toMatch(/ELIFECYCLE|^\$ /m);
  });
});
