import { spawn } from 'node:child_process';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { TestbedError, tailLines } from './errors.js';
import { runCommand } from './exec.js';
import { heldElsewhere, lockOwner, type ReleaseLock, sleep, tryLock } from './pid-lock.js';

/** One external program, built with `go build` from a pinned Go module directory. */
export interface ToolSpec {
  /** Name of the binary and of its cache directory. */
  readonly name: string;
  /** Directory under the modules directory whose go.mod and go.sum pin every module of the build. */
  readonly moduleDir: string;
  /** The module that carries `version`; the tests check that go.mod requires exactly that. */
  readonly module: string;
  readonly version: string;
  /** The `main` package, built from inside `moduleDir`. */
  readonly packagePath: string;
  readonly ldflags: readonly string[];
  /** Digest of our own program's source (module dir), part of its cache path. */
  readonly sourceDigest?: string;
  /** Its go.mod replaces modules of the release: the cache path carries the go.mod's digest. */
  readonly patched?: boolean;
  /** Go build tags (`-tags`), when the program needs some. */
  readonly tags?: readonly string[];
}

export type ToolProgressKind = 'cached' | 'building' | 'still-building' | 'waiting' | 'built';

export interface ToolProgress {
  readonly tool: string;
  readonly kind: ToolProgressKind;
  readonly elapsedSeconds: number;
  /** One line for a person watching CI. */
  readonly message: string;
}

export interface BuildOptions {
  readonly onProgress?: (event: ToolProgress) => void;
  /** Environment of `go` (PATH, GOPATH, GOCACHE, GOPROXY, ...). */
  readonly env?: NodeJS.ProcessEnv;
  /** How many `go build`s this call runs at once: 2 (default) or 1; the machines have 2 cores. */
  readonly concurrency?: 1 | 2;
  /** Deadline for one tool's build. */
  readonly buildTimeoutMs?: number;
  /** How often a build in progress reports that it is still running. */
  readonly heartbeatMs?: number;
}

export interface InstallLocation {
  /** Holds one directory per spec's `moduleDir`. */
  readonly modulesDir: string;
  /** Binaries go to `<cacheDir>/bin/<name>-<version>/<name>`. */
  readonly cacheDir: string;
}

/** `<cacheDir>/bin/<name>-<version>/<name>`: a new pin gets a new directory, so stale binaries are never used. */
export function binaryPath(
  cacheDir: string,
  spec: Pick<ToolSpec, 'name' | 'version' | 'sourceDigest'>,
): string {
  const source = spec.sourceDigest === undefined ? '' : `-src.${spec.sourceDigest}`;
  return join(cacheDir, 'bin', `${spec.name}-${spec.version}${source}`, spec.name);
}

interface BuildContext extends InstallLocation {
  readonly env: NodeJS.ProcessEnv;
  readonly report: (tool: string, kind: ToolProgressKind, elapsedSeconds: number, message: string) => void;
  readonly buildTimeoutMs: number;
  readonly heartbeatMs: number;
}

/** How many `go build`s run at once per cache, across every process: the machines have 2 cores. */
export const GO_BUILD_SLOTS = 2;

/**
 * Makes sure each spec's binary is in the cache, building missing ones two (or one) at a time with
 * `go build`, installed atomically (built to a temporary name, then renamed). Returns name -> path.
 * Tools of one module directory are built one after the other (the second reuses what the first
 * compiled), tools another process is building are left for last, and no more than
 * `GO_BUILD_SLOTS` builds run at once per cache whichever processes ask.
 */
export async function installGoBinaries(
  specs: readonly ToolSpec[],
  location: InstallLocation,
  options: BuildOptions = {},
): Promise<Map<string, string>> {
  const onProgress = options.onProgress;
  const context: BuildContext = {
    ...location,
    env: options.env ?? process.env,
    report: (tool, kind, elapsedSeconds, message) => onProgress?.({ tool, kind, elapsedSeconds, message }),
    buildTimeoutMs: options.buildTimeoutMs ?? 60 * 60_000,
    heartbeatMs: options.heartbeatMs ?? 15_000,
  };
  const paths = new Map<string, string>();
  const pending: ToolSpec[] = [];
  for (const spec of new Map(specs.map((spec) => [spec.name, spec])).values()) {
    const path = binaryPath(context.cacheDir, spec);
    if (await isFile(path)) {
      context.report(spec.name, 'cached', 0, `${spec.name}: cached at ${path}`);
      paths.set(spec.name, path);
    } else {
      pending.push(spec);
    }
  }
  if (pending.length === 0) return paths;
  await checkGo(context.env);

  const building = new Set<string>(); // module dirs this call is building now
  let failed = false;
  let wake = () => {};
  let changed = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const settle = () => {
    wake();
    changed = new Promise<void>((resolve) => {
      wake = resolve;
    });
  };
  const next = async (): Promise<ToolSpec | undefined> => {
    for (;;) {
      if (failed || pending.length === 0) return undefined;
      const candidates = pending.filter((spec) => !building.has(spec.moduleDir));
      if (candidates.length === 0) {
        await changed;
        continue;
      }
      const busy = new Set<string>();
      for (const spec of candidates) {
        if (await heldElsewhere(buildLockPath(context.cacheDir, spec))) busy.add(spec.name);
      }
      // Decided without awaiting: the other worker may have taken a candidate meanwhile.
      const free = pending.filter((spec) => !building.has(spec.moduleDir));
      const pick = free.find((spec) => !busy.has(spec.name)) ?? free[0];
      if (pick === undefined) continue;
      pending.splice(pending.indexOf(pick), 1);
      building.add(pick.moduleDir);
      return pick;
    }
  };
  const worker = async (): Promise<void> => {
    for (let spec = await next(); spec !== undefined; spec = await next()) {
      try {
        paths.set(spec.name, await installOne(spec, context));
      } catch (error) {
        failed = true;
        throw error;
      } finally {
        building.delete(spec.moduleDir);
        settle();
      }
    }
  };
  const workers = Array.from({ length: Math.min(options.concurrency ?? 2, GO_BUILD_SLOTS) }, worker);
  const rejected = (await Promise.allSettled(workers)).find((result) => result.status === 'rejected');
  if (rejected) throw rejected.reason;
  return paths;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function buildLockPath(cacheDir: string, spec: ToolSpec): string {
  return join(binaryPath(cacheDir, spec), '..', '.build.lock');
}

async function installOne(spec: ToolSpec, context: BuildContext): Promise<string> {
  const name = spec.name;
  const path = binaryPath(context.cacheDir, spec);
  await mkdir(join(path, '..'), { recursive: true });
  const release = await acquireBuildLock(name, buildLockPath(context.cacheDir, spec), path, context);
  try {
    // Another process may have finished this build while we waited for its lock.
    if (await isFile(path)) {
      context.report(name, 'cached', 0, `${name}: built by another process at ${path}`);
      return path;
    }
    const releaseSlot = await acquireBuildSlot(name, context);
    try {
      await buildTool(spec, path, context);
    } finally {
      await releaseSlot();
    }
    return path;
  } finally {
    await release();
  }
}

async function checkGo(env: NodeJS.ProcessEnv): Promise<void> {
  try {
    await runCommand('go', ['version'], { env, timeoutMs: 60_000 });
  } catch (error) {
    throw new TestbedError(
      'GO_NOT_FOUND',
      'building the test tools needs the Go toolchain (go >= 1.26), but `go version` failed: is `go` on PATH? ' +
        `(PATH=${env.PATH ?? ''})`,
      { cause: error },
    );
  }
}

/** One build of a tool at a time across processes: its lock file, taken over when its owner is gone. */
async function acquireBuildLock(
  name: string,
  lock: string,
  binary: string,
  context: BuildContext,
): Promise<ReleaseLock> {
  const started = Date.now();
  let lastReport = 0;
  for (;;) {
    const release = await tryLock(lock, name);
    if (release) return release;
    if (await isFile(binary)) return async () => {};
    const elapsed = Date.now() - started;
    const owner = (await lockOwner(lock))?.pid ?? 'unknown';
    if (elapsed > context.buildTimeoutMs) {
      throw new TestbedError('BUILD_TIMEOUT', `${name}: process ${owner} has held ${lock} for ${elapsed} ms`);
    }
    if (lastReport === 0 || Date.now() - lastReport >= context.heartbeatMs) {
      lastReport = Date.now();
      const seconds = Math.round(elapsed / 1000);
      context.report(
        name,
        'waiting',
        seconds,
        `${name}: waiting for process ${owner} to build it (${seconds}s)`,
      );
    }
    await sleep(1000);
  }
}

/** At most `GO_BUILD_SLOTS` builds at once per cache, whichever processes run them. */
async function acquireBuildSlot(name: string, context: BuildContext): Promise<ReleaseLock> {
  const directory = join(context.cacheDir, 'bin', '.build-slots');
  await mkdir(directory, { recursive: true });
  const slots = Array.from({ length: GO_BUILD_SLOTS }, (_, index) => join(directory, `${index}.lock`));
  const started = Date.now();
  let lastReport = 0;
  for (;;) {
    for (const slot of slots) {
      const release = await tryLock(slot, name);
      if (release) return release;
    }
    const elapsed = Date.now() - started;
    if (elapsed > context.buildTimeoutMs) {
      throw new TestbedError('BUILD_TIMEOUT', `${name}: no build slot in ${directory} for ${elapsed} ms`);
    }
    if (lastReport === 0 || Date.now() - lastReport >= context.heartbeatMs) {
      lastReport = Date.now();
      const owners = (await Promise.all(slots.map(lockOwner)))
        .filter((owner) => owner !== undefined)
        .map((owner) => `${owner.label} (pid ${owner.pid})`);
      const seconds = Math.round(elapsed / 1000);
      context.report(
        name,
        'waiting',
        seconds,
        `${name}: waiting for a build slot, ${GO_BUILD_SLOTS} builds at a time (${owners.join(', ')}) (${seconds}s)`,
      );
    }
    await sleep(1000);
  }
}

function buildArgs(spec: ToolSpec, output: string): string[] {
  // -s -w drops debug information: the binaries are half the size and nobody debugs them here.
  // -mod=readonly: go.sum is complete, so the checksum database (unreachable here) is never asked;
  // -buildvcs=false: the build does not depend on the state of the Signet checkout.
  return [
    'build',
    '-mod=readonly',
    '-buildvcs=false',
    '-trimpath',
    ...(spec.tags && spec.tags.length > 0 ? ['-tags', spec.tags.join(',')] : []),
    '-ldflags',
    ['-s', '-w', ...spec.ldflags].join(' '),
    '-o',
    output,
    spec.packagePath,
  ];
}

async function buildTool(spec: ToolSpec, path: string, context: BuildContext): Promise<void> {
  const name = spec.name;
  const temporary = `${path}.${process.pid}.tmp`;
  const moduleDir = join(context.modulesDir, spec.moduleDir);
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 1000);
  context.report(
    name,
    'building',
    0,
    `${name}: building ${spec.packagePath} (${spec.module}@${spec.version}); cold builds take minutes`,
  );
  const heartbeat = setInterval(() => {
    context.report(name, 'still-building', seconds(), `${name}: still building (${seconds()}s)`);
  }, context.heartbeatMs);
  try {
    await runGoBuild(spec, buildArgs(spec, temporary), moduleDir, context);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  } finally {
    clearInterval(heartbeat);
  }
  context.report(name, 'built', seconds(), `${name}: built in ${seconds()}s -> ${path}`);
}

function runGoBuild(spec: ToolSpec, args: string[], cwd: string, context: BuildContext): Promise<void> {
  // Static binaries: no C compiler needed, the same binary on every machine.
  const env = { ...context.env, CGO_ENABLED: '0' };
  return new Promise((resolve, reject) => {
    const child = spawn('go', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-64 * 1024);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, context.buildTimeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      const code = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'GO_NOT_FOUND' : 'BUILD_FAILED';
      reject(new TestbedError(code, `${spec.name}: could not run go: ${error.message}`, { cause: error }));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0 && !timedOut) return resolve();
      const what = timedOut
        ? `did not finish within ${context.buildTimeoutMs} ms`
        : `failed (exit code ${code})`;
      const errorCode = timedOut ? 'BUILD_TIMEOUT' : 'BUILD_FAILED';
      reject(
        new TestbedError(
          errorCode,
          `building ${spec.name} (${spec.packagePath}@${spec.version} in ${cwd}) ${what}:\n` +
            `  go ${args.join(' ')}\n${tailLines(output, 30)}`,
        ),
      );
    });
  });
}
