// Item: what each public package ships. `npm pack --dry-run` lists a tarball's files; the list is
// printed (one line per directory) and checked: the build and its sources, README, LICENSE and
// CHANGELOG, nothing else (no tests, fixtures, benchmarks, configs), no compiled file without its
// source, no source map naming a file that is not shipped, WebAssembly only in a language's engine
// package (ADR 26), and a manifest ready for a public registry. The release test checks that what
// pnpm publishes is this same list.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '@signet/testbed';
import { beforeAll, describe, expect, it } from 'vitest';
import { readmeExamples } from '../src/readme-examples.ts';
import { publicPackages, repositoryRoot, toolEnv, type WorkspacePackage } from '../src/workspace.ts';

const root = repositoryRoot();
const packages = await publicPackages(root);

interface PackedFile {
  readonly path: string;
  readonly size: number;
}

async function packList(pkg: WorkspacePackage): Promise<PackedFile[]> {
  const { stdout } = await runCommand('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: pkg.dir,
    env: toolEnv(),
    timeoutMs: 120_000,
  });
  const [report] = JSON.parse(stdout) as [{ files: PackedFile[] }];
  return report.files;
}

function summary(name: string, files: readonly PackedFile[]): string {
  const byDir = new Map<string, { count: number; bytes: number }>();
  for (const file of files) {
    const dir = file.path.includes('/') ? `${file.path.slice(0, file.path.indexOf('/'))}/` : file.path;
    const entry = byDir.get(dir) ?? { count: 0, bytes: 0 };
    byDir.set(dir, { count: entry.count + 1, bytes: entry.bytes + file.size });
  }
  const lines = [...byDir].map(
    ([dir, { count, bytes }]) =>
      `  ${dir.padEnd(16)} ${String(count).padStart(4)} files ${String(Math.round(bytes / 1024)).padStart(7)} KiB`,
  );
  return `${name}\n${lines.join('\n')}`;
}

describe.each(packages.map((pkg) => [pkg.manifest.name, pkg] as const))('%s', (name, pkg) => {
  let files: PackedFile[];
  let paths: Set<string>;
  beforeAll(async () => {
    files = await packList(pkg);
    paths = new Set(files.map((f) => f.path));
    process.stderr.write(`${summary(`npm pack ${name}`, files)}\n`);
  });

  it('ships dist, its sources, README, LICENSE and nothing else', async () => {
    const allowed =
      /^(dist\/.+\.(js|d\.ts|js\.map|d\.ts\.map)|src\/.+\.ts|engines\/.+\.(wasm|json)|README\.md|LICENSE|CHANGELOG\.md|package\.json)$/;
    expect(files.map((f) => f.path).filter((path) => !allowed.test(path))).toEqual([]);
    expect(
      files
        .map((f) => f.path)
        .filter((path) => /(^|\/)(test|tests|fixtures|bench|__tests__)\/|\.test\.|\.bench\./.test(path)),
    ).toEqual([]);
    for (const required of ['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts']) {
      expect(paths.has(required), required).toBe(true);
    }
    expect(await readFile(join(pkg.dir, 'LICENSE'), 'utf8')).toBe(
      await readFile(join(root, 'LICENSE'), 'utf8'),
    );
  });

  it('carries WebAssembly only as a language engine package: its own engine and manifest', () => {
    const language = /^@signet\/policy-engine-([a-z]+)$/.exec(name)?.[1];
    expect([...paths].filter((path) => path.startsWith('engines/')).sort()).toEqual(
      language === undefined ? [] : ['engines/manifest.json', `engines/${language}.wasm`].sort(),
    );
  });

  it('has no compiled file without its source, and no source map that names a file it does not ship', async () => {
    for (const path of paths) {
      const compiled = /^dist\/(.+?)(\.d)?\.js$|^dist\/(.+?)\.d\.ts$/.exec(path);
      const stem = compiled?.[1] ?? compiled?.[3];
      if (stem === undefined) continue;
      // Declarations of plain type files (`webassembly.d.ts`) are sources themselves.
      const source = [`src/${stem}.ts`, `src/${stem}.d.ts`].some((s) => paths.has(s));
      expect(source, `${path} without src/${stem}.ts`).toBe(true);
    }
    for (const path of [...paths].filter((p) => p.endsWith('.map'))) {
      const map = JSON.parse(await readFile(join(pkg.dir, path), 'utf8')) as { sources: string[] };
      for (const source of map.sources) {
        const resolved = join(path, '..', source);
        expect(paths.has(resolved), `${path} names ${source}`).toBe(true);
      }
    }
  });

  it('has a manifest ready for a public registry', () => {
    const m = pkg.manifest;
    expect(m.license).toBe('Apache-2.0');
    expect(m.type).toBe('module');
    expect(m.sideEffects).toBe(false);
    expect(m.exports).toEqual({
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      './package.json': './package.json',
    });
    expect(m.repository).toEqual({
      type: 'git',
      url: 'git+https://github.com/signet-dev/signet.git',
      directory: pkg.path,
    });
    expect(m.publishConfig).toEqual({ access: 'public', provenance: true });
    // The oldest LTS a library runs on, never the app's Node 26 only.
    expect(m.engines?.node).toMatch(/^\^2[02]\.\d+\.\d+ \|\| /);
    for (const [dependency, range] of Object.entries(m.dependencies ?? {})) {
      if (dependency.startsWith('@signet/')) expect(range, dependency).toBe('workspace:^');
    }
  });

  it('has a README with an install line and a runnable example with its output', async () => {
    const readme = await readFile(join(pkg.dir, 'README.md'), 'utf8');
    expect(readme).toMatch(new RegExp(`^npm install ${name.replace('/', '\\/')}( |$)`, 'm'));
    const { examples, runs } = readmeExamples(readme);
    expect(examples.map((e) => e.module).sort()).toEqual(expect.arrayContaining(['cjs', 'esm']));
    for (const example of examples) {
      expect(runs.filter((run) => run.file === example.file).length, example.file).toBeGreaterThan(0);
    }
  });
});
