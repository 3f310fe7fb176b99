// A real npm registry on loopback for release tests: verdaccio (the npm package, pinned in this
// package's dependencies), its storage and user database in the run directory, no uplinks (it
// serves only what is published to it), started and stopped by pid through the ProcessGroup.

import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { TestbedError } from './errors.js';
import { freePort, type ManagedProcess, type ProcessGroup } from './process.js';

export interface NpmRegistry {
  /** `http://127.0.0.1:PORT/` (with the trailing slash npm writes in `.npmrc` keys). */
  readonly url: string;
  /** A token of the one user allowed to publish. */
  readonly token: string;
  readonly process: ManagedProcess;
  /**
   * `.npmrc` lines that send `scope`'s packages (`@signet`) here, with the token, and everything
   * else to the registry already configured.
   */
  npmrc(scope: string, options?: { readonly withToken?: boolean }): string;
  /** The registry's document of a package (`GET /<name>`), or undefined for 404. */
  packument(name: string): Promise<Packument | undefined>;
  stop(): Promise<void>;
}

export interface Packument {
  readonly name: string;
  readonly 'dist-tags': Readonly<Record<string, string>>;
  readonly versions: Readonly<
    Record<string, { readonly dependencies?: Readonly<Record<string, string>>; readonly dist: Dist }>
  >;
}

interface Dist {
  readonly tarball: string;
  readonly integrity: string;
}

export interface StartNpmRegistryOptions {
  readonly group: ProcessGroup;
  /** Node binary that runs verdaccio; default the running one. */
  readonly node?: string;
  readonly readyTimeoutMs?: number;
}

/** The largest package body it accepts: `@signet/policy-engine-rego` is about 9 MB gzipped. */
const MAX_BODY = '200mb';
const USER = 'signet-release';

function config(storage: string, htpasswd: string): string {
  // JSON is YAML: no YAML writer needed. Anyone may read; only the one user may publish; never
  // proxied to another registry.
  return JSON.stringify(
    {
      storage,
      auth: { htpasswd: { file: htpasswd, max_users: 1 } },
      uplinks: {},
      packages: { '**': { access: '$all', publish: '$authenticated', unpublish: '$authenticated' } },
      max_body_size: MAX_BODY,
      web: { enable: false },
      log: { type: 'stdout', format: 'json', level: 'warn' },
    },
    null,
    2,
  );
}

/** Starts verdaccio on a free loopback port, adds its one user and returns the registry. */
export async function startNpmRegistry(options: StartNpmRegistryOptions): Promise<NpmRegistry> {
  const require = createRequire(import.meta.url);
  const bin = join(dirname(require.resolve('verdaccio/package.json')), 'bin', 'verdaccio');
  const dir = join(options.group.runDir, 'verdaccio');
  await mkdir(join(dir, 'storage'), { recursive: true });
  const configFile = join(dir, 'config.yaml');
  await writeFile(configFile, config(join(dir, 'storage'), join(dir, 'htpasswd')));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const managed = await options.group.start({
    name: `verdaccio-${port}`,
    command: options.node ?? process.execPath,
    args: [bin, '--config', configFile, '--listen', `127.0.0.1:${port}`],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
    cwd: dir,
    ready: { kind: 'http', url: `${url}-/ping` },
    readyTimeoutMs: options.readyTimeoutMs ?? 60_000,
  });
  const token = await addUser(url);
  const api = async (path: string): Promise<Response> =>
    fetch(new URL(path, url), { signal: AbortSignal.timeout(30_000) });
  return {
    url,
    token,
    process: managed,
    npmrc: (scope, npmrcOptions = {}) => {
      const hostPath = url.replace(/^http:/, '');
      const lines = [`${scope}:registry=${url}`];
      if (npmrcOptions.withToken !== false) lines.push(`${hostPath}:_authToken=${token}`);
      return `${lines.join('\n')}\n`;
    },
    packument: async (name) => {
      const response = await api(name.replace('/', '%2f'));
      if (response.status === 404) return undefined;
      if (!response.ok) {
        throw new TestbedError('COMMAND_FAILED', `GET ${name} from ${url}: HTTP ${response.status}`);
      }
      return (await response.json()) as Packument;
    },
    stop: async () => {
      await managed.stop();
    },
  };
}

/** npm's `adduser` call (the CouchDB user document): creates the user and returns its token. */
async function addUser(url: string): Promise<string> {
  const password = `release-${process.pid}-${Date.now()}`;
  const response = await fetch(new URL(`-/user/org.couchdb.user:${USER}`, url), {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: USER, password }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await response.json().catch(() => ({}))) as { token?: string; error?: string };
  if (!response.ok || typeof body.token !== 'string') {
    throw new TestbedError(
      'COMMAND_FAILED',
      `verdaccio at ${url} did not add its user: HTTP ${response.status} ${body.error ?? ''}`,
    );
  }
  return body.token;
}
