import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TestbedError } from './errors.js';
import { runCommand } from './exec.js';
import type { ToolProgress } from './go-build.js';
import { freePort, type ManagedProcess, type ProcessGroup } from './process.js';
import { tarArchive } from './tar.js';
import { ensureTools } from './tools.js';

/** A registry on loopback: plain HTTP and anonymous unless started with `tls` or `htpasswd`. */
export interface Registry {
  /** `127.0.0.1:PORT`, the registry part of image references. */
  readonly host: string;
  /** `http://127.0.0.1:PORT`, or `https://` with `tls`. */
  readonly url: string;
  /** Whether `GET /v2/<name>/referrers/<digest>` is served (else it answers 404). */
  readonly referrers: boolean;
  readonly process: ManagedProcess;
  stop(): Promise<void>;
}

export interface StartRegistryOptions {
  /**
   * true: an OCI 1.1 registry with the referrers API (cuelabs.dev/go/oci/ociregistry, in memory).
   * false: CNCF distribution v3 (filesystem storage in the run directory), which has no referrers
   * API, so cosign and other clients use the `sha256-<hex>` fallback tag.
   */
  readonly referrers: boolean;
  readonly group: ProcessGroup;
  readonly env?: NodeJS.ProcessEnv;
  readonly onProgress?: (event: ToolProgress) => void;
  readonly readyTimeoutMs?: number;
  /** distribution only: serve TLS with this certificate (PEM files); `caPem` is for the readiness check. */
  readonly tls?: { readonly certificateFile: string; readonly keyFile: string; readonly caPem: string };
  /** distribution only: require Basic credentials from this htpasswd file (see `writeHtpasswd`). */
  readonly htpasswdFile?: string;
  /** A fixed port instead of a free one (for ports a test needs, such as those browsers block). */
  readonly port?: number;
}

interface DistributionExtras {
  readonly tls: StartRegistryOptions['tls'];
  readonly htpasswdFile: string | undefined;
}

function distributionConfig(port: number, storage: string, extras?: DistributionExtras): string {
  // No debug listener, no health checks, nothing but the API on loopback.
  return [
    'version: 0.1',
    'log:',
    '  level: info',
    '  accesslog:',
    '    disabled: true',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${JSON.stringify(storage)}`,
    '  delete:',
    '    enabled: true',
    '  maintenance:',
    '    uploadpurging:',
    '      enabled: false',
    'http:',
    `  addr: 127.0.0.1:${port}`,
    ...(extras?.tls
      ? [
          '  tls:',
          `    certificate: ${JSON.stringify(extras.tls.certificateFile)}`,
          `    key: ${JSON.stringify(extras.tls.keyFile)}`,
        ]
      : []),
    ...(extras?.htpasswdFile
      ? ['auth:', '  htpasswd:', '    realm: signet-test', `    path: ${JSON.stringify(extras.htpasswdFile)}`]
      : []),
    '',
  ].join('\n');
}

/** Starts a registry on a free loopback port and waits until `GET /v2/` answers 200. */
export async function startRegistry(options: StartRegistryOptions): Promise<Registry> {
  const toolName = options.referrers ? 'oci-registry' : 'registry';
  const toolOptions = {
    ...(options.env ? { env: options.env } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  };
  const { [toolName]: binary } = await ensureTools([toolName], toolOptions);
  if (options.referrers && (options.tls || options.htpasswdFile)) {
    throw new TestbedError(
      'COMMAND_FAILED',
      'tls and htpasswd are options of the distribution registry (referrers: false)',
    );
  }
  const port = options.port ?? (await freePort());
  const host = `127.0.0.1:${port}`;
  const url = `${options.tls ? 'https' : 'http'}://${host}`;
  const baseEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: options.group.runDir };
  let args: string[];
  let env: NodeJS.ProcessEnv;
  if (options.referrers) {
    args = ['-addr', host];
    env = baseEnv;
  } else {
    const storage = join(options.group.runDir, `registry-${port}`);
    await mkdir(storage, { recursive: true });
    const config = join(options.group.runDir, `registry-${port}.yml`);
    await writeFile(
      config,
      distributionConfig(port, storage, { tls: options.tls, htpasswdFile: options.htpasswdFile }),
    );
    args = ['serve', config];
    // distribution exports traces through OpenTelemetry's autoexport; there is no collector here.
    env = { ...baseEnv, OTEL_TRACES_EXPORTER: 'none', OTEL_SDK_DISABLED: 'true' };
  }
  const managed = await options.group.start({
    name: options.referrers ? `oci-registry-${port}` : `registry-${port}`,
    command: binary,
    args,
    env,
    ready: {
      kind: 'http',
      url: `${url}/v2/`,
      status: options.htpasswdFile ? 401 : 200,
      ...(options.tls ? { ca: options.tls.caPem } : {}),
    },
    readyTimeoutMs: options.readyTimeoutMs ?? 30_000,
  });
  return {
    host,
    url,
    referrers: options.referrers,
    process: managed,
    stop: async () => {
      await managed.stop();
    },
  };
}

export interface PushOptions {
  /** Path of the crane binary; see `ensureTools(['crane'])`. */
  readonly crane: string;
  readonly timeoutMs?: number;
  /** Scratch directory for the layer tarball. */
  readonly workDir: string;
}

/**
 * Pushes a one-layer image that no other call produces (the layer holds random bytes) to
 * `<registry>/<repo>:<tag>` and returns its manifest digest (`sha256:...`).
 */
export async function pushRandomImage(
  registry: Pick<Registry, 'host'>,
  repo: string,
  tag: string,
  options: PushOptions,
): Promise<string> {
  const nonce = randomBytes(16).toString('hex');
  const layer = join(options.workDir, `layer-${nonce}.tar`);
  await writeFile(layer, tarArchive([{ name: 'signet-testbed/nonce', content: Buffer.from(`${nonce}\n`) }]));
  const reference = `${registry.host}/${repo}:${tag}`;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const env = craneEnv(options.workDir);
  await runCommand(
    options.crane,
    ['append', '--insecure', '--oci-empty-base', '-f', layer, '-t', reference],
    { env, timeoutMs },
  );
  const { stdout } = await runCommand(options.crane, ['digest', '--insecure', reference], { env, timeoutMs });
  const digest = stdout.trim();
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) {
    throw new TestbedError('COMMAND_FAILED', `crane digest ${reference} printed ${JSON.stringify(stdout)}`);
  }
  return digest;
}

/** crane reads ~/.docker/config.json; a scratch HOME keeps the user's credentials out of tests. */
export function craneEnv(home: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, DOCKER_CONFIG: join(home, '.docker') };
}
