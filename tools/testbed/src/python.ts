// Python programs the tests run (moto's AWS server, python-tuf, the Vault transit stand-in),
// installed with pip from PyPI into a versioned directory of the cache on first use:
// `<cache>/python/<name>-<version>-py<X.Y>/`, used through PYTHONPATH with the machine's python3.
// `pip install --target` needs no virtualenv (Debian's python3-venv) and never touches the
// interpreter's own packages. Where python3 has no pip module, a virtualenv made by `python3 -m
// venv` (ensurepip) in the cache lends its pip. The install is atomic (temporary directory, then
// rename) and serialised across processes with a lock, like the Go builds.
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TestbedError } from './errors.js';
import { runCommand } from './exec.js';
import { lockOwner, sleep, tryLock } from './pid-lock.js';
import { cacheRoot } from './tools.js';

/** One pinned pip install. */
export interface PythonPackageSpec {
  readonly name: string;
  readonly version: string;
  /** pip requirement strings, exact versions. */
  readonly requirements: readonly string[];
}

export const MOTO_VERSION = '5.2.5';

export const PYTHON_PACKAGES = {
  tuf: { name: 'tuf', version: '7.0.1', requirements: ['tuf==7.0.1', 'securesystemslib[crypto]==1.6.0'] },
  // moto's server for AWS STS, ECR and KMS: only the services the tests use and what `moto.server`
  // needs (flask, flask-cors); `moto[server]` would pull in every service's dependencies (600 MB).
  moto: {
    name: 'moto',
    version: MOTO_VERSION,
    requirements: [`moto[ecr,sts]==${MOTO_VERSION}`, 'flask==3.1.3', 'flask-cors==6.0.5'],
  },
} as const satisfies Record<string, PythonPackageSpec>;

export type PythonPackageName = keyof typeof PYTHON_PACKAGES;

export interface PythonInstall {
  /** Directory to put on PYTHONPATH. */
  readonly path: string;
  /** The interpreter to run with it: `$SIGNET_PYTHON`, else `python3`, by its absolute path. */
  readonly python: string;
}

export interface EnsurePythonOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** One line per event: installing, waiting for another process, installed. */
  readonly onProgress?: (line: string) => void;
  /** How long to wait for another process's install of the same set. */
  readonly waitTimeoutMs?: number;
}

interface Interpreter {
  /** Its absolute path (`sys.executable`): children run it directly, not through a shim on PATH. */
  readonly executable: string;
  /** `3.11`: a `--target` install is bound to it (compiled wheels). */
  readonly version: string;
}

const interpreters = new Map<string, Promise<Interpreter>>();

/** `$SIGNET_PYTHON`, else `python3`, as found on PATH. */
function interpreter(env: NodeJS.ProcessEnv): Promise<Interpreter> {
  const python = env.SIGNET_PYTHON ?? 'python3';
  let found = interpreters.get(python);
  if (found === undefined) {
    found = runCommand(
      python,
      ['-c', 'import sys; print(sys.executable); print("%d.%d" % sys.version_info[:2])'],
      {
        env,
        timeoutMs: 30_000,
      },
    ).then(
      ({ stdout }) => {
        const [executable = '', version = ''] = stdout.trim().split('\n');
        return { executable: executable.trim() || python, version: version.trim() };
      },
      (error: unknown) => {
        interpreters.delete(python);
        throw new TestbedError(
          'COMMAND_FAILED',
          `the tests run Python programs (moto, python-tuf) but \`${python}\` does not run: install Python 3 ` +
            'or point SIGNET_PYTHON at an interpreter',
          { cause: error },
        );
      },
    );
    interpreters.set(python, found);
  }
  return found;
}

/** The directory a package set installs into: `<cache>/python/<name>-<version>-py<X.Y>`. */
export async function pythonPackageDir(
  name: PythonPackageName,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const spec: PythonPackageSpec = PYTHON_PACKAGES[name];
  const { version } = await interpreter(env);
  return join(cacheRoot(env), 'python', `${spec.name}-${spec.version}-py${version}`);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Installs (or finds) a pinned Python package set. */
export async function ensurePythonPackage(
  name: PythonPackageName,
  options: EnsurePythonOptions = {},
): Promise<PythonInstall> {
  const env = options.env ?? process.env;
  const spec: PythonPackageSpec = PYTHON_PACKAGES[name];
  const python = (await interpreter(env)).executable;
  const target = await pythonPackageDir(name, env);
  await installOnce(target, spec.name, options, async (temporary) => {
    const pip = await pipCommand(python, env, options);
    options.onProgress?.(`${spec.name}: pip install ${spec.requirements.join(' ')} -> ${target}`);
    await runCommand(
      pip.python,
      [
        ...pip.args,
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
  });
  return { path: target, python };
}

/**
 * Makes `target` once across processes: `make` fills a temporary directory, which is renamed into
 * place and marked `.installed`; a process that finds the lock taken waits for the marker.
 */
async function installOnce(
  target: string,
  label: string,
  options: EnsurePythonOptions,
  make: (temporary: string) => Promise<void>,
): Promise<void> {
  const done = join(target, '.installed');
  if (await exists(done)) return;
  await mkdir(join(target, '..'), { recursive: true });
  const lock = `${target}.lock`;
  const started = Date.now();
  const waitTimeoutMs = options.waitTimeoutMs ?? 15 * 60_000;
  let lastReport = 0;
  let release = await tryLock(lock, label);
  while (release === undefined) {
    if (await exists(done)) return;
    const elapsed = Date.now() - started;
    const owner = (await lockOwner(lock))?.pid ?? 'unknown';
    if (elapsed > waitTimeoutMs) {
      throw new TestbedError(
        'BUILD_TIMEOUT',
        `${label}: process ${owner} has held ${lock} for ${elapsed} ms`,
      );
    }
    if (lastReport === 0 || Date.now() - lastReport >= 15_000) {
      lastReport = Date.now();
      const seconds = Math.round(elapsed / 1000);
      options.onProgress?.(`${label}: waiting for process ${owner} to install it (${seconds}s)`);
    }
    await sleep(1000);
    release = await tryLock(lock, label);
  }
  try {
    if (await exists(done)) return;
    const temporary = `${target}.${process.pid}.tmp`;
    await rm(temporary, { recursive: true, force: true });
    try {
      await make(temporary);
    } catch (error) {
      await rm(temporary, { recursive: true, force: true });
      throw new TestbedError('BUILD_FAILED', `${label}: installing ${target} failed: ${String(error)}`, {
        cause: error,
      });
    }
    await rm(target, { recursive: true, force: true });
    await rename(temporary, target);
    await writeFile(done, '');
    options.onProgress?.(`${label}: installed in ${Math.round((Date.now() - started) / 1000)}s at ${target}`);
  } finally {
    await release();
  }
}

interface Pip {
  readonly python: string;
  readonly args: readonly string[];
}

/**
 * The interpreter's own pip (`python3 -m pip`), else the pip of a virtualenv that `python3 -m
 * venv` (ensurepip) makes in the cache, for the same Python version.
 */
async function pipCommand(
  python: string,
  env: NodeJS.ProcessEnv,
  options: EnsurePythonOptions,
): Promise<Pip> {
  const own = await runCommand(python, ['-m', 'pip', '--version'], { env, timeoutMs: 60_000 }).then(
    () => true,
    () => false,
  );
  if (own) return { python, args: ['-m', 'pip'] };
  const venv = join(cacheRoot(env), 'python', `pip-py${(await interpreter(env)).version}`);
  options.onProgress?.(`pip: ${python} has no pip module; using the pip of a virtualenv at ${venv}`);
  await installOnce(venv, 'pip', options, async (temporary) => {
    try {
      await runCommand(python, ['-m', 'venv', temporary], { env, timeoutMs: 5 * 60_000 });
    } catch (error) {
      throw new TestbedError(
        'COMMAND_FAILED',
        `the tests install Python packages with pip, but ${python} has neither pip (\`${python} -m pip\`) ` +
          `nor ensurepip (\`${python} -m venv\`); install pip for it, or point SIGNET_PYTHON at a Python that has it`,
        { cause: error },
      );
    }
  });
  return { python: join(venv, 'bin', 'python'), args: ['-m', 'pip'] };
}

/** The version pip recorded, for a test that checks the pin took effect. */
export async function installedVersion(
  install: PythonInstall,
  distribution: string,
): Promise<string | undefined> {
  const entry = (await readdir(install.path)).find(
    (name) => name.toLowerCase().startsWith(`${distribution.toLowerCase()}-`) && name.endsWith('.dist-info'),
  );
  if (entry === undefined) return undefined;
  const metadata = await readFile(join(install.path, entry, 'METADATA'), 'utf8');
  return /^Version: (.+)$/m.exec(metadata)?.[1];
}
