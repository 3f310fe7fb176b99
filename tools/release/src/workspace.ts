// The workspace as the release sees it: its packages (public or private), read from
// pnpm-workspace.yaml and each package.json, and a throwaway copy of its files that a release can
// rewrite (`changeset version`) without touching the repository.
import { chmod, copyFile, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand } from '@signet/testbed';
import { parse } from 'yaml';

export interface PackageManifest {
  readonly name: string;
  readonly version: string;
  readonly private?: boolean;
  readonly description?: string;
  readonly license?: string;
  readonly type?: string;
  readonly sideEffects?: boolean;
  readonly main?: string;
  readonly types?: string;
  readonly exports?: Readonly<Record<string, unknown>>;
  readonly files?: readonly string[];
  readonly engines?: { readonly node?: string };
  readonly repository?: { readonly type: string; readonly url: string; readonly directory?: string };
  readonly publishConfig?: Readonly<Record<string, unknown>>;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
  readonly bin?: Readonly<Record<string, string>>;
}

export interface WorkspacePackage {
  readonly manifest: PackageManifest;
  /** Absolute directory. */
  readonly dir: string;
  /** Directory relative to the workspace root (`packages/core`). */
  readonly path: string;
}

/** The repository root (this file is `tools/release/{src,dist}/workspace.*`). */
export function repositoryRoot(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
}

export async function readManifest(dir: string): Promise<PackageManifest> {
  return JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as PackageManifest;
}

/** Every package of the workspace (`packages/*`, `apps/*`, `e2e`, `tools/*`), sorted by path. */
export async function workspacePackages(root: string): Promise<WorkspacePackage[]> {
  const config = parse(await readFile(join(root, 'pnpm-workspace.yaml'), 'utf8')) as { packages: string[] };
  const dirs: string[] = [];
  for (const pattern of config.packages) {
    if (pattern.endsWith('/*')) {
      const parent = join(root, pattern.slice(0, -2));
      for (const entry of await readdir(parent, { withFileTypes: true }).catch(() => [])) {
        if (entry.isDirectory()) dirs.push(join(parent, entry.name));
      }
    } else {
      dirs.push(join(root, pattern));
    }
  }
  const found: WorkspacePackage[] = [];
  for (const dir of dirs) {
    const exists = await stat(join(dir, 'package.json')).then(
      () => true,
      () => false,
    );
    if (exists) found.push({ manifest: await readManifest(dir), dir, path: relative(root, dir) });
  }
  return found.sort((a, b) => a.path.localeCompare(b.path));
}

/** The packages that are published: every workspace package not marked `private`. */
export async function publicPackages(root: string): Promise<WorkspacePackage[]> {
  return (await workspacePackages(root)).filter((p) => p.manifest.private !== true);
}

/** The environment for pnpm and npm commands: the test runner's NODE_ENV=test would change installs. */
export function toolEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const { NODE_ENV: _ignored, ...rest } = process.env;
  return { ...rest, npm_config_update_notifier: 'false', npm_config_fund: 'false', ...extra };
}

/**
 * Copies the working tree's files (tracked, and untracked ones not ignored: what `git status`
 * would commit) to `dest`, makes it a git repository on `main` with one commit, and installs it
 * offline from the pnpm store. The copy is what a maintainer's clone looks like before a release.
 */
export async function copyWorkspace(root: string, dest: string): Promise<void> {
  const { stdout } = await runCommand(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    {
      cwd: root,
      timeoutMs: 60_000,
    },
  );
  const files = stdout.split('\0').filter((file) => file.length > 0);
  const created = new Set<string>();
  for (const file of files) {
    const from = join(root, file);
    // A file deleted in the working tree but not yet in the index.
    const info = await stat(from).catch(() => undefined);
    if (!info?.isFile()) continue;
    const to = join(dest, file);
    const parent = dirname(to);
    if (!created.has(parent)) {
      await mkdir(parent, { recursive: true });
      created.add(parent);
    }
    await copyFile(from, to);
    await chmod(to, info.mode & 0o777);
  }
  const git = (args: readonly string[]) => runCommand('git', args, { cwd: dest, timeoutMs: 120_000 });
  await git(['init', '--quiet', '--initial-branch=main']);
  // A maintainer's clone has an identity; `changeset publish` tags with `git tag -m` (annotated),
  // which needs one too, and a fresh machine has no ~/.gitconfig to give it.
  await git(['config', 'user.name', 'Signet release test']);
  await git(['config', 'user.email', 'release@signet.invalid']);
  await git(['add', '--all']);
  await git(['commit', '--quiet', '--no-verify', '--message', 'the working tree to release']);
  await runCommand('pnpm', ['install', '--frozen-lockfile', '--offline'], {
    cwd: dest,
    env: toolEnv(),
    timeoutMs: 600_000,
  });
}
