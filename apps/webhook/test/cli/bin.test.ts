// The built `signet` executable on a Node older than Signet needs: one line saying which Node it
// needs, not a SyntaxError from a module loaded before any check could run. The machine's own
// `node` (/usr/bin/node, Node 20 here) is the older Node.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const bin = new URL('../../dist/bin/signet.js', import.meta.url).pathname;
const systemNode = '/usr/bin/node';
const systemMajor = existsSync(systemNode)
  ? Number(execFileSync(systemNode, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }))
  : undefined;

describe('signet on an older Node', () => {
  it.skipIf(systemMajor === undefined || systemMajor >= 26)(
    `says that it needs Node 26 and exits 3 (on ${systemNode}, Node ${systemMajor})`,
    async () => {
      const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(systemNode, [bin, 'verify', '--help'], (error, stdout, stderr) =>
          resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
        );
      });
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(
        new RegExp(
          `^signet: Signet needs Node 26 or later; this is Node ${systemMajor}\\.\\d+\\.\\d+ \\(${systemNode}\\)\\n$`,
        ),
      );
      expect(result.code).toBe(3);
    },
  );

  it('on Node 26 runs the CLI', () => {
    expect(execFileSync(process.execPath, [bin, '--version'], { encoding: 'utf8' })).toMatch(
      /^signet \d+\.\d+\.\d+/,
    );
  });
});
