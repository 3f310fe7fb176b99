// A fresh project outside the workspace that installs Signet's published packages the way a user
// does (npm or pnpm, on one Node.js version, `@signet` packages from the release's registry and
// everything else from the registry configured on the machine), then runs files in it.
import { access, mkdir, realpath, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { type NodeBinary, runCommand } from '@signet/testbed';
import { toolEnv } from './workspace.js';

export type PackageManager = 'npm' | 'pnpm';

export interface ConsumerOptions {
  readonly dir: string;
  readonly node: NodeBinary;
  readonly packageManager: PackageManager;
  /** `.npmrc` of the project: where `@signet` packages come from. */
  readonly npmrc: string;
  readonly dependencies: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
}

export interface RunOutput {
  readonly stdout: string;
  readonly stderr: string;
}

export interface Consumer {
  readonly dir: string;
  readonly node: NodeBinary;
  readonly packageManager: PackageManager;
  /** Seconds the install took. */
  readonly installSeconds: number;
  /** Writes `content` to `path` (relative to the project). */
  write(path: string, content: string): Promise<void>;
  /** `node <file> ...args` in the project on its Node; throws with the output when it fails. */
  run(file: string, args?: readonly string[], env?: NodeJS.ProcessEnv): Promise<RunOutput>;
  /** The project's TypeScript compiler (`typescript` among its devDependencies) on its Node. */
  tsc(args: readonly string[]): Promise<RunOutput>;
}

async function onPath(program: string): Promise<string> {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, program);
    const found = await access(candidate).then(
      () => true,
      () => false,
    );
    if (found) return realpath(candidate);
  }
  throw new Error(`${program} is not on PATH`);
}

/** Creates the project and installs its dependencies with `--engine-strict` on `options.node`. */
export async function createConsumer(options: ConsumerOptions): Promise<Consumer> {
  await mkdir(options.dir, { recursive: true });
  const manifest = {
    name: `signet-consumer-${options.packageManager}-node${options.node.version.split('.')[0]}`,
    private: true,
    type: 'module',
    dependencies: options.dependencies,
    devDependencies: options.devDependencies ?? {},
  };
  await writeFile(join(options.dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await writeFile(join(options.dir, '.npmrc'), `${options.npmrc}engine-strict=true\n`);
  // The project's Node first on PATH: npm, pnpm and install scripts see that version.
  const env = toolEnv({ PATH: `${options.node.binDir}${delimiter}${process.env.PATH ?? ''}` });
  const started = Date.now();
  if (options.packageManager === 'npm') {
    // npm's own JavaScript on the project's Node (the machine's `npm` would start on its default).
    const npm = await onPath('npm');
    await runCommand(options.node.path, [npm, 'install', '--no-audit', '--prefer-offline'], {
      cwd: options.dir,
      env,
      timeoutMs: 600_000,
    });
  } else {
    // A new project has no lockfile; pnpm would refuse to make one when CI is set.
    await runCommand(await onPath('pnpm'), ['install', '--prefer-offline', '--no-frozen-lockfile'], {
      cwd: options.dir,
      env,
      timeoutMs: 600_000,
    });
  }
  const installSeconds = Math.round((Date.now() - started) / 100) / 10;
  return {
    dir: options.dir,
    node: options.node,
    packageManager: options.packageManager,
    installSeconds,
    write: async (path, content) => {
      await mkdir(join(options.dir, path, '..'), { recursive: true });
      await writeFile(join(options.dir, path), content);
    },
    run: (file, args = [], extraEnv = {}) =>
      runCommand(options.node.path, [file, ...args], {
        cwd: options.dir,
        env: { ...env, ...extraEnv },
        timeoutMs: 180_000,
      }),
    tsc: (args) =>
      runCommand(
        options.node.path,
        [join(options.dir, 'node_modules', 'typescript', 'bin', 'tsc'), ...args],
        {
          cwd: options.dir,
          env,
          timeoutMs: 300_000,
        },
      ),
  };
}
