import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand } from '../src/exec.ts';
import { ensurePythonPackage, installedVersion, pythonPackageDir } from '../src/python.ts';

// A real pip install from the package index into an empty cache (python-tuf, the smallest set):
// once, then found; two processes' worth of callers at once install it once.

describe('ensurePythonPackage', () => {
  const caches: string[] = [];
  afterAll(() => Promise.all(caches.map((dir) => rm(dir, { recursive: true, force: true }))));

  it('installs a pinned set into the cache on first use, then finds it there', async () => {
    const cache = await mkdtemp(join(tmpdir(), 'signet-python-cache-'));
    caches.push(cache);
    const env = { ...process.env, SIGNET_CACHE_DIR: cache };
    const lines: string[] = [];
    const [first, concurrent] = await Promise.all([
      ensurePythonPackage('tuf', { env, onProgress: (line) => lines.push(line) }),
      ensurePythonPackage('tuf', { env, onProgress: (line) => lines.push(line) }),
    ]);
    expect(first).toEqual(concurrent);
    expect(first.path).toBe(await pythonPackageDir('tuf', env));
    expect(first.path).toMatch(new RegExp(`^${cache}/python/tuf-7\\.0\\.1-py3\\.\\d+$`));
    expect(lines.filter((line) => line.includes('pip install'))).toHaveLength(1);
    expect(lines.some((line) => /tuf: installed in \d+s/.test(line))).toBe(true);
    expect(await installedVersion(first, 'tuf')).toBe('7.0.1');
    // The interpreter runs it by PYTHONPATH alone: no virtualenv.
    const { stdout } = await runCommand(first.python, ['-c', 'import tuf; print(tuf.__version__)'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONPATH: first.path },
      timeoutMs: 30_000,
    });
    expect(stdout.trim()).toBe('7.0.1');

    const installedAt = (await stat(join(first.path, '.installed'))).mtimeMs;
    const again: string[] = [];
    const second = await ensurePythonPackage('tuf', { env, onProgress: (line) => again.push(line) });
    expect(second).toEqual(first);
    expect(again).toEqual([]);
    expect((await stat(join(first.path, '.installed'))).mtimeMs).toBe(installedAt);
  }, 300_000);

  it('says what to do when the interpreter does not run', async () => {
    const env = { ...process.env, SIGNET_PYTHON: '/nonexistent/python3' };
    await expect(ensurePythonPackage('tuf', { env })).rejects.toThrow(/SIGNET_PYTHON/);
  });
});
