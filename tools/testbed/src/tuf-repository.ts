// A real TUF repository for the trust-root tests: made and changed by python-tuf's Metadata API
// (`python/tuf_repo.py`, tuf 7.0.1 from PyPI in the cache), served as static files on loopback by
// a mirror that can be stopped ("the mirror goes away") and started again on the same port.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand } from './exec.js';
import { ensurePythonPackage, type PythonInstall } from './python.js';

const SCRIPT = fileURLToPath(new URL('../python/tuf_repo.py', import.meta.url));

export class TufRepository {
  readonly dir: string;
  readonly #python: PythonInstall;
  #stage = 0;

  private constructor(dir: string, python: PythonInstall) {
    this.dir = dir;
    this.#python = python;
  }

  /** A new repository in `dir` (root v1, one Ed25519 key per role) holding `targets`. */
  static async create(
    dir: string,
    targets: Readonly<Record<string, Uint8Array>>,
    options: { readonly onProgress?: (line: string) => void } = {},
  ): Promise<TufRepository> {
    const python = await ensurePythonPackage(
      'tuf',
      options.onProgress ? { onProgress: options.onProgress } : {},
    );
    const repository = new TufRepository(dir, python);
    await mkdir(dir, { recursive: true });
    await repository.#run('init', await repository.#targetArgs(targets));
    return repository;
  }

  /** `1.root.json`, the root a client starts from. */
  initialRoot(): Promise<Buffer> {
    return readFile(join(this.dir, '1.root.json'));
  }

  /** New targets metadata (and snapshot, timestamp) with these targets added or replaced. */
  async setTargets(targets: Readonly<Record<string, Uint8Array>>): Promise<void> {
    await this.#run('set-target', await this.#targetArgs(targets));
  }

  /** Root N+1 with new keys for every role, signed by the old and new root keys. */
  async rotateRoot(): Promise<void> {
    await this.#run('rotate-root', []);
  }

  /**
   * A new timestamp that expired an hour ago (clients must refuse the repository), or, with
   * `inSeconds`, one that expires that many seconds from now.
   */
  async expireTimestamp(inSeconds?: number): Promise<void> {
    await this.#run('expire-timestamp', inSeconds === undefined ? [] : [String(inSeconds)]);
  }

  async #targetArgs(targets: Readonly<Record<string, Uint8Array>>): Promise<string[]> {
    const staging = join(this.dir, '..', `${this.dir.split('/').pop()}-staging`);
    await mkdir(staging, { recursive: true });
    const args: string[] = [];
    for (const [name, data] of Object.entries(targets)) {
      const path = join(staging, `${++this.#stage}-${name}`);
      await writeFile(path, data);
      args.push(`${name}=${path}`);
    }
    return args;
  }

  async #run(command: string, args: readonly string[]): Promise<void> {
    await runCommand(this.#python.python, [SCRIPT, command, this.dir, ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONPATH: this.#python.path },
      timeoutMs: 60_000,
    });
  }
}

/** A static-file mirror of a repository directory on 127.0.0.1. */
export class TufMirror {
  readonly #dir: string;
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  #port = 0;
  /** Paths requested, in order. */
  readonly requests: string[] = [];

  constructor(dir: string) {
    this.#dir = dir;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** Starts serving (again on the same port after `stop()`). */
  async start(): Promise<this> {
    const server = createServer((request, response) => {
      const path = normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname));
      this.requests.push(path);
      if (path.includes('..') || path.includes('/.keys')) return response.writeHead(404).end();
      readFile(join(this.#dir, path)).then(
        (data) => response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(data),
        () => response.writeHead(404).end(),
      );
    });
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, '127.0.0.1', () => resolve());
    });
    this.#port = (server.address() as { port: number }).port;
    this.#server = server;
    return this;
  }

  /** Stops answering: the port refuses connections until `start()`. */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server === undefined) return;
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
