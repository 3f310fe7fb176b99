// Python programs the tests run (python-tuf, the Vault transit stand-in), installed with pip into a
// versioned directory of the cache, once: `<cache>/python/<name>-<version>/`, used through
// PYTHONPATH. pip reaches only the package index; the install is atomic (temporary directory,
// then rename) and serialised across processes with a lock, like the Go builds.
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { TestbedError } from './errors.js';
import { runCommand } from './exec.js';
import { cacheRoot } from './tools.js';

/** One pinned pip install. */
export interface PythonPackageSpec {
  readonly name: string;
  readonly version: string;
  /** pip requirement strings, exact versions. */
  readonly requirements: readonly string[];
}

export const PYTHON_PACKAGES = {
  tuf: { name: 'tuf', version: '7.0.1', requirements: ['tuf==7.0.1', 'securesystemslib[crypto]==1.6.0'] },
} as const satisfies Record<string, PythonPackageSpec>;

export type PythonPackageName = keyof typeof PYTHON_PACKAGES;

export interface PythonInstall {
  /** Directory to put on PYTHONPATH. */
  readonly path: string;
  readonly python: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Installs (or finds) a pinned Python package set; `onProgress` gets one line per event. */
export async function ensurePythonPackage(
  name: PythonPackageName,
  options: { readonly env?: NodeJS.ProcessEnv; readonly onProgress?: (line: string) => void } = {},
): Promise<PythonInstall> {
  const env = options.env ?? process.env;
  const spec: PythonPackageSpec = PYTHON_PACKAGES[name];
  const python = env.SIGNET_PYTHON ?? 'python3';
  const target = join(cacheRoot(env), 'python', `${spec.name}-${spec.version}`);
  const done = join(target, '.installed');
  if (await exists(done)) return { path: target, python };
  await mkdir(join(target, '..'), { recursive: true });
  const lock = `${target}.lock`;
  for (let waited = 0; ; waited += 1) {
    try {
      await (await open(lock, 'wx')).close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (await exists(done)) return { path: target, python };
      if (waited > 900) throw new TestbedError('BUILD_TIMEOUT', `${spec.name}: ${lock} held for 15 minutes`);
      if (waited % 15 === 0)
        options.onProgress?.(`${spec.name}: waiting for another pip install (${waited}s)`);
      await sleep(1000);
    }
  }
  try {
    if (await exists(done)) return { path: target, python };
    const started = Date.now();
    options.onProgress?.(`${spec.name}: pip install ${spec.requirements.join(' ')} -> ${target}`);
    const temporary = `${target}.${process.pid}.tmp`;
    await rm(temporary, { recursive: true, force: true });
    await runCommand(
      python,
      [
        '-m',
        'pip',
        'install',
        '--quiet',
        '--disable-pip-version-check',
        '--no-input',
        '--target',
        temporary,
        ...spec.requirements,
      ],
      // --target never touches the interpreter's own packages: a Debian python3 (PEP 668) allows it.
      { env: { ...env, PIP_NO_INPUT: '1', PIP_BREAK_SYSTEM_PACKAGES: '1' }, timeoutMs: 15 * 60_000 },
    );
    await rm(target, { recursive: true, force: true });
    await rename(temporary, target);
    await (await open(done, 'w')).close();
    options.onProgress?.(`${spec.name}: installed in ${Math.round((Date.now() - started) / 1000)}s`);
    return { path: target, python };
  } finally {
    await rm(lock, { force: true });
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** The version pip recorded, for a test that checks the pin took effect. */
export async function installedVersion(
  install: PythonInstall,
  distribution: string,
): Promise<string | undefined> {
  const { readdir } = await import('node:fs/promises');
  const entry = (await readdir(install.path)).find(
    (name) => name.toLowerCase().startsWith(`${distribution.toLowerCase()}-`) && name.endsWith('.dist-info'),
  );
  if (entry === undefined) return undefined;
  const metadata = await readFile(join(install.path, entry, 'METADATA'), 'utf8');
  return /^Version: (.+)$/m.exec(metadata)?.[1];
}
