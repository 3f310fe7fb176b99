// A Docker engine of the test run's own: `dockerd` with its data root, exec root, socket and pid
// file in one directory, stopped by its pid. kind's nodes are privileged containers; on machines
// whose capability bounding set lacks a capability Docker grants privileged containers (these
// lack CAP_SYS_RESOURCE), runc cannot start them, so the engine runs every container through
// `oci-runtime-wrapper` (tools/testbed/go/oci-runtime-wrapper), which drops what the machine does
// not grant before executing the real runc.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { TestbedError, tailLines } from './errors.js';
import { runCommand } from './exec.js';
import { ensureTools } from './tools.js';

export interface DockerEngine {
  /** `unix://<dir>/docker.sock`, for `DOCKER_HOST`. */
  readonly host: string;
  readonly pid: number;
  readonly dir: string;
  readonly logPath: string;
}

export interface StartDockerOptions {
  /** Holds everything of this engine: `data/`, `exec/`, `docker.sock`, `dockerd.pid`, `dockerd.log`. */
  readonly dir: string;
  readonly onProgress?: (line: string) => void;
  readonly readyTimeoutMs?: number;
}

const RUNTIME = 'signet-runc';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const socketOf = (dir: string) => `unix://${join(dir, 'docker.sock')}`;
const pidFileOf = (dir: string) => join(dir, 'dockerd.pid');

/** `docker info` against `host`: undefined when it answers, else why not. */
export async function dockerProblem(
  host: string | undefined,
  timeoutMs = 15_000,
): Promise<string | undefined> {
  const env = { ...process.env, ...(host ? { DOCKER_HOST: host } : {}) };
  try {
    await runCommand('docker', ['info', '--format', '{{.ServerVersion}}'], { env, timeoutMs });
    return undefined;
  } catch (error) {
    return (error as Error).message.split('\n').slice(0, 6).join(' ');
  }
}

/**
 * Starts `dockerd` detached (it outlives this process; stop it with `stopDockerEngine(dir)`), with
 * the bridge of the default network disabled (kind makes its own network: no clash with another
 * engine's `docker0`) and the OCI runtime wrapper as the default runtime. Resolves once
 * `docker info` answers.
 */
export async function startDockerEngine(options: StartDockerOptions): Promise<DockerEngine> {
  const report = options.onProgress ?? (() => {});
  const dir = options.dir;
  await mkdir(join(dir, 'data'), { recursive: true });
  await mkdir(join(dir, 'exec'), { recursive: true });
  const { 'oci-runtime-wrapper': wrapper } = await ensureTools(['oci-runtime-wrapper'], {
    onProgress: (event) => report(event.message),
  });
  const logPath = join(dir, 'dockerd.log');
  const host = socketOf(dir);
  const args = [
    '--data-root',
    join(dir, 'data'),
    '--exec-root',
    join(dir, 'exec'),
    '--pidfile',
    pidFileOf(dir),
    '--host',
    host,
    '--bridge=none',
    '--storage-driver=overlay2',
    '--add-runtime',
    `${RUNTIME}=${wrapper}`,
    '--default-runtime',
    RUNTIME,
  ];
  report(`dockerd ${args.join(' ')}`);
  const fd = openSync(logPath, 'a');
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn('dockerd', args, { detached: true, stdio: ['ignore', fd, fd], env: process.env });
  } finally {
    closeSync(fd);
  }
  let exited = false;
  child.on('exit', () => {
    exited = true;
  });
  child.on('error', () => {
    exited = true;
  });
  child.unref();
  const pid = child.pid;
  if (pid === undefined) {
    throw new TestbedError('PROCESS_EXITED', 'could not start dockerd: is docker.io installed?');
  }
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (exited) {
      const log = await readFile(logPath, 'utf8').catch(() => '');
      throw new TestbedError(
        'PROCESS_EXITED',
        `dockerd exited before it answered; ${logPath}:\n${tailLines(log)}`,
      );
    }
    if ((await dockerProblem(host, 5_000)) === undefined) break;
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      const log = await readFile(logPath, 'utf8').catch(() => '');
      throw new TestbedError(
        'NOT_READY',
        `dockerd did not answer within the deadline; ${logPath}:\n${tailLines(log)}`,
      );
    }
    await sleep(500);
  }
  report(`dockerd: ready (pid ${pid}, DOCKER_HOST=${host})`);
  return { host, pid, dir, logPath };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops the engine started in `dir` by the pid in its pid file (SIGTERM: dockerd stops its
 * containers; SIGKILL after `graceMs`). `removeData` deletes its data root afterwards.
 */
export async function stopDockerEngine(
  dir: string,
  options: { readonly graceMs?: number; readonly removeData?: boolean } = {},
): Promise<void> {
  const pid = Number.parseInt(await readFile(pidFileOf(dir), 'utf8').catch(() => ''), 10);
  if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + (options.graceMs ?? 60_000);
    while (alive(pid) && Date.now() < deadline) await sleep(250);
    if (alive(pid)) process.kill(pid, 'SIGKILL');
    while (alive(pid)) await sleep(100);
  }
  if (options.removeData) await rm(join(dir, 'data'), { recursive: true, force: true });
}
