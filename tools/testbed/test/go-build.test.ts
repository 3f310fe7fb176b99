import { spawn } from 'node:child_process';
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
  let twins: ToolSpec[];

  beforeAll(async () => {
    modulesDir = await tempDir('signet-go-modules-');
    hello = await goModule(
      modulesDir,
      'hello',
      'package main\n\nimport "fmt"\n\nvar greeting = "unset"\n\nfunc main() { fmt.Println(greeting) }\n',
    );
    hello = { ...hello, ldflags: ['-X main.greeting=stamped'] };
    broken = await goModule(modulesDir, 'broken', 'package main\n\nfunc main() { undefinedFunction() }\n');
    // Two programs of one module directory, as the Kubernetes binaries are.
    twins = await Promise.all(
      ['left', 'right'].map(async (name) => {
        await mkdir(join(modulesDir, 'twins', name), { recursive: true });
        await writeFile(
          join(modulesDir, 'twins', name, 'main.go'),
          `package main\n\nfunc main() { println("${name}") }\n`,
        );
        return {
          name,
          moduleDir: 'twins',
          module: 'example.test/twins',
          version: 'v0.0.1',
          packagePath: `./${name}`,
          ldflags: [],
        };
      }),
    );
    await writeFile(join(modulesDir, 'twins', 'go.mod'), 'module example.test/twins\n\ngo 1.26.0\n');
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
      { onProgress: (e) => events.push(e), concurrency: 1 },
    );
    await expect(failure).rejects.toMatchObject({ code: 'BUILD_FAILED' });
    expect(events.map((e) => e.tool)).not.toContain('hello');
  });

  it('builds two at a time, but tools of one module directory one after the other', async () => {
    const cacheDir = await tempDir('signet-cache-');
    const events: string[] = [];
    await installGoBinaries(
      [...twins, hello],
      { modulesDir, cacheDir },
      { onProgress: (e) => events.push(`${e.tool} ${e.kind}`) },
    );
    const at = (event: string) => events.indexOf(event);
    // The second twin waits for the first (it reuses what the first compiled); hello does not.
    expect(at('right building')).toBeGreaterThan(at('left built'));
    expect(at('hello building')).toBeLessThan(at('left built'));
    expect(events.filter((event) => event.endsWith(' built'))).toHaveLength(3);
  });

  it('waits while other processes hold both build slots, and takes over the slot of one that died', async () => {
    const cacheDir = await tempDir('signet-cache-');
    const slots = join(cacheDir, 'bin', '.build-slots');
    await mkdir(slots, { recursive: true });
    // Two other processes "building": one alive for the whole test, one that exits after a moment.
    const busy = spawn('sleep', ['60'], { stdio: 'ignore' });
    const brief = spawn('sleep', ['1'], { stdio: 'ignore' });
    try {
      await writeFile(join(slots, '0.lock'), `${busy.pid} kube-apiserver`);
      await writeFile(join(slots, '1.lock'), `${brief.pid} cosign`);
      const events: ToolProgress[] = [];
      await installGoBinaries(
        [hello],
        { modulesDir, cacheDir },
        { onProgress: (e) => events.push(e), heartbeatMs: 100 },
      );
      const waiting = events.filter((e) => e.kind === 'waiting').map((e) => e.message);
      expect(waiting[0]).toMatch(
        /hello: waiting for a build slot, 2 builds at a time \(kube-apiserver \(pid \d+\), cosign \(pid \d+\)\)/,
      );
      const kinds = events.map((e) => e.kind).filter((kind) => kind !== 'still-building');
      expect(kinds.slice(kinds.indexOf('building'))).toEqual(['building', 'built']);
      expect(kinds.slice(0, kinds.indexOf('building')).every((kind) => kind === 'waiting')).toBe(true);
      // The slot taken over is free again; the live process's slot was never touched.
      expect((await readdir(slots)).sort()).toEqual(['0.lock']);
    } finally {
      busy.kill();
      brief.kill();
    }
  });
});
