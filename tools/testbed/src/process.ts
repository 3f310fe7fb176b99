import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestbedError, tailLines } from './errors.js';

/** How to tell that a started program is ready to serve. */
export type Readiness =
  | { readonly kind: 'tcp'; readonly port: number; readonly host?: string }
  | {
      readonly kind: 'http';
      readonly url: string;
      readonly status?: number;
      /** PEM CA for an https URL with a self-signed certificate (kube-apiserver, the webhook). */
      readonly ca?: string;
      readonly headers?: Readonly<Record<string, string>>;
    }
  /** A line the program prints once it serves; the match is kept in `ManagedProcess.readyMatch`. */
  | { readonly kind: 'log'; readonly pattern: RegExp };

export interface StartOptions {
  /** Label for the log file and error messages (`etcd`, `registry`, ...). */
  readonly name: string;
  readonly command: string;
  readonly args?: readonly string[];
  /** The complete environment of the program; default: only PATH. Nothing else is inherited. */
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  readonly ready?: Readiness;
  readonly readyTimeoutMs?: number;
}

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

const POLL_MS = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A free TCP port on 127.0.0.1 (the OS picks it; it is released before returning). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not read the port of a loopback listener'));
      });
    });
  });
}

/** A fresh directory under the OS temp dir for one run's logs and data. */
export function createRunDir(prefix = 'signet-run-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** One running program, started by a `ProcessGroup`, with its output in `logPath`. */
export class ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** Settles when the program exits, for whatever reason. */
  readonly exited: Promise<ExitInfo>;
  readyMatch: RegExpMatchArray | undefined;
  #exit: ExitInfo | undefined;

  constructor(name: string, pid: number, logPath: string, exited: Promise<ExitInfo>) {
    this.name = name;
    this.pid = pid;
    this.logPath = logPath;
    this.exited = exited.then((info) => {
      this.#exit = info;
      return info;
    });
  }

  get running(): boolean {
    return this.#exit === undefined;
  }

  async log(): Promise<string> {
    return readFile(this.logPath, 'utf8').catch(() => '');
  }

  async logTail(lines = 40): Promise<string> {
    return tailLines(await this.log(), lines);
  }

  /** SIGTERM to the program's process group, SIGKILL after `graceMs`; resolves once it has exited. */
  async stop(graceMs = 5_000): Promise<ExitInfo | undefined> {
    if (this.#exit) return this.#exit;
    signalGroup(this.pid, 'SIGTERM');
    const exited = await settleWithin(this.exited, graceMs);
    if (exited) return exited;
    signalGroup(this.pid, 'SIGKILL');
    return settleWithin(this.exited, 5_000);
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    // Negative pid: the whole process group, so helpers a program started go down with it.
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

async function settleWithin<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The programs one test suite started. `stopAll()` belongs in `afterAll` (it runs when tests fail
 * too); programs still running when Node exits, or on SIGINT/SIGTERM, are killed as well.
 */
export class ProcessGroup {
  readonly runDir: string;
  readonly #graceMs: number;
  readonly #processes = new Set<ManagedProcess>();
  readonly #names = new Map<string, number>();

  constructor(options: { readonly runDir: string; readonly graceMs?: number }) {
    this.runDir = options.runDir;
    this.#graceMs = options.graceMs ?? 5_000;
  }

  get processes(): readonly ManagedProcess[] {
    return [...this.#processes];
  }

  async start(options: StartOptions): Promise<ManagedProcess> {
    const managed = this.#spawn(options);
    try {
      await waitUntilReady(managed, options);
    } catch (error) {
      await this.#stop(managed);
      throw error;
    }
    return managed;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.#processes].map((managed) => this.#stop(managed)));
  }

  /** The last lines of every program's log, for a failing test's report. */
  async logTails(lines = 20): Promise<string> {
    const parts = await Promise.all(
      [...this.#processes].map(async (p) => `--- ${p.name} (${p.logPath})\n${await p.logTail(lines)}`),
    );
    return parts.join('\n');
  }

  async #stop(managed: ManagedProcess): Promise<void> {
    await managed.stop(this.#graceMs);
    this.#processes.delete(managed);
    liveProcesses().delete(managed.pid);
  }

  #logPath(name: string): string {
    const count = (this.#names.get(name) ?? 0) + 1;
    this.#names.set(name, count);
    return join(this.runDir, count === 1 ? `${name}.log` : `${name}-${count}.log`);
  }

  #spawn(options: StartOptions): ManagedProcess {
    installExitHandlers();
    const logPath = this.#logPath(options.name);
    const fd = openSync(logPath, 'a');
    try {
      const child = spawn(options.command, options.args ?? [], {
        cwd: options.cwd ?? this.runDir,
        env: options.env ?? { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        stdio: ['ignore', fd, fd],
        // Its own process group: stop() and the exit handlers signal the program and its children.
        detached: true,
      });
      // A forgotten stop() must not keep Node alive; the exit handler kills the program then.
      child.unref();
      const exited = new Promise<ExitInfo>((resolve) => {
        child.on('exit', (code, signal) => resolve({ code, signal }));
        child.on('error', () => resolve({ code: null, signal: null }));
      });
      if (child.pid === undefined) {
        throw new TestbedError('PROCESS_EXITED', `${options.name}: could not start ${options.command}`);
      }
      const managed = new ManagedProcess(options.name, child.pid, logPath, exited);
      this.#processes.add(managed);
      liveProcesses().add(child.pid);
      void managed.exited.then(() => liveProcesses().delete(managed.pid));
      return managed;
    } finally {
      closeSync(fd);
    }
  }
}

async function waitUntilReady(managed: ManagedProcess, options: StartOptions): Promise<void> {
  const ready = options.ready;
  if (!ready) return;
  const timeoutMs = options.readyTimeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!managed.running) {
      const info = await managed.exited;
      throw new TestbedError(
        'PROCESS_EXITED',
        `${options.name} exited (code ${info.code}, signal ${info.signal}) before it was ready; ` +
          `log ${managed.logPath}:\n${await managed.logTail()}`,
      );
    }
    if (await isReady(managed, ready, Math.max(200, Math.min(2_000, deadline - Date.now())))) return;
    if (Date.now() > deadline) {
      throw new TestbedError(
        'NOT_READY',
        `${options.name} was not ready (${describeReadiness(ready)}) within ${timeoutMs} ms; ` +
          `log ${managed.logPath}:\n${await managed.logTail()}`,
      );
    }
    await sleep(POLL_MS);
  }
}

function describeReadiness(ready: Readiness): string {
  switch (ready.kind) {
    case 'tcp':
      return `TCP ${ready.host ?? '127.0.0.1'}:${ready.port}`;
    case 'http':
      return `GET ${ready.url} -> ${ready.status ?? 200}`;
    case 'log':
      return `log line ${ready.pattern}`;
  }
}

async function isReady(managed: ManagedProcess, ready: Readiness, timeoutMs: number): Promise<boolean> {
  switch (ready.kind) {
    case 'tcp':
      return tcpOpen(ready.host ?? '127.0.0.1', ready.port, timeoutMs);
    case 'http':
      return (await httpStatus(ready.url, timeoutMs, ready)) === (ready.status ?? 200);
    case 'log': {
      const match = (await managed.log()).match(ready.pattern);
      if (match) managed.readyMatch = match;
      return match !== null;
    }
  }
}

/** Whether something accepts TCP connections at host:port. */
export function tcpOpen(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** The status of one GET, or undefined when nothing answered in time. */
export function httpStatus(
  url: string,
  timeoutMs: number,
  options: { readonly ca?: string; readonly headers?: Readonly<Record<string, string>> } = {},
): Promise<number | undefined> {
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: 'GET', timeout: timeoutMs, headers: options.headers, ca: options.ca },
      (res) => {
        res.resume();
        resolve(res.statusCode);
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

// Process-wide registration, shared by every copy of this module (src and dist may both be loaded):
// pids still running when Node exits or is interrupted are killed.
const LIVE = Symbol.for('signet.testbed.liveProcesses');
const INSTALLED = Symbol.for('signet.testbed.exitHandlersInstalled');
type GlobalWithLive = typeof globalThis & { [LIVE]?: Set<number>; [INSTALLED]?: boolean };

function liveProcesses(): Set<number> {
  const holder = globalThis as GlobalWithLive;
  let live = holder[LIVE];
  if (!live) {
    live = new Set<number>();
    holder[LIVE] = live;
  }
  return live;
}

function installExitHandlers(): void {
  const holder = globalThis as GlobalWithLive;
  if (holder[INSTALLED]) return;
  holder[INSTALLED] = true;
  const live = liveProcesses();
  process.on('exit', () => {
    for (const pid of live) signalGroup(pid, 'SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const pid of live) signalGroup(pid, 'SIGTERM');
      // Give the programs a moment to shut down; the exit handler SIGKILLs whatever is left.
      setTimeout(() => process.exit(signal === 'SIGINT' ? 130 : 143), 1_000);
    });
  }
}
