import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../src/exec.ts';
import { binaryPath, installGoBinaries, type ToolProgress, type ToolSpec } from '../src/go-build.ts';

// Real `go build`s of two throwaway modules: one that builds, one that does not.
async function goModule(root: string, name: string, source: string): Promise<ToolSpec> {
  await mkdir(join(root, name), { recursive: true });
  await writeFile(join(root, name, 'go.mod'), `module example.test/${name}\n\ngo 1.26.0\n`);
  await writeFile(join(root, name, 'main.go'), source);
  return {
    name,
    moduleDir: name,
    module: `example.test/${name}`,
    version: 'v0.0.1',
    packagePath: '.',
    ldflags: [],
  };
}

const scratch: string[] = [];
const tempDir = async (prefix: string) => {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
};
afterAll(() => Promise.all(scratch.map((dir) => rm(dir, { recursive: true, force: true }))));

describe('installGoBinaries', () => {
  let modulesDir: string;
  let hello: ToolSpec;
  let broken: ToolSpec;

  beforeAll(async () => {
    modulesDir = await tempDir('signet-go-modules-');
    hello = await goModule(
      modulesDir,
      'hello',
      'package main\n\nimport "fmt"\n\nvar greeting = "unset"\n\nfunc main() { fmt.Println(greeting) }\n',
    );
    hello = { ...hello, ldflags: ['-X main.greeting=stamped'] };
    broken = await goModule(modulesDir, 'broken', 'package main\n\nfunc main() { undefinedFunction() }\n');
  });

  it('builds a missing binary with progress, installs it atomically, then reports it cached', async () => {
    const cacheDir = await tempDir('signet-cache-');
    const events: ToolProgress[] = [];
    const paths = await installGoBinaries(
      [hello],
      { modulesDir, cacheDir },
      { onProgress: (e) => events.push(e) },
    );
    const path = binaryPath(cacheDir, hello);
    expect(paths.get('hello')).toBe(path);
    expect((await runCommand(path, [], { timeoutMs: 5_000 })).stdout).toBe('stamped\n');
    expect(events.map((e) => e.kind)).toEqual(['building', 'built']);
    // Only the binary: no temporary file, no lock left behind.
    expect(await readdir(join(path, '..'))).toEqual(['hello']);

    const again: ToolProgress[] = [];
    await installGoBinaries([hello], { modulesDir, cacheDir }, { onProgress: (e) => again.push(e) });
    expect(again.map((e) => e.kind)).toEqual(['cached']);
  });

  it('reports progress while a build runs, and builds once when asked twice at the same time', async () => {
    const cacheDir = await tempDir('signet-cache-');
    const events: ToolProgress[] = [];
    const options = { onProgress: (e: ToolProgress) => events.push(e), heartbeatMs: 50 };
    await Promise.all([
      installGoBinaries([hello], { modulesDir, cacheDir }, options),
      installGoBinaries([hello], { modulesDir, cacheDir }, options),
    ]);
    expect(events.filter((e) => e.kind === 'built')).toHaveLength(1);
    expect(events.some((e) => e.kind === 'still-building' || e.kind === 'waiting')).toBe(true);
  });

  it('fails with the tool name and the tail of the go output, installing nothing', async () => {
    const cacheDir = await tempDir('signet-cache-');
    const failure = installGoBinaries([broken], { modulesDir, cacheDir });
    await expect(failure).rejects.toMatchObject({ code: 'BUILD_FAILED' });
    await expect(failure).rejects.toThrow(/building broken .*failed[\s\S]*undefined: undefinedFunction/);
    expect(await readdir(join(binaryPath(cacheDir, broken), '..'))).toEqual([]);
  });

  it('stops after the first failure', async () => {
    const cacheDir = await tempDir('signet-cache-');
    const events: ToolProgress[] = [];
    const failure = installGoBinaries(
      [broken, hello],
      { modulesDir, cacheDir },
      { onProgress: (e) => events.push(e) },
    );
    await expect(failure).rejects.toMatchObject({ code: 'BUILD_FAILED' });
    expect(events.map((e) => e.tool)).not.toContain('hello');
  });
});
