// moto in server mode (PyPI `moto`): real AWS API implementations (STS, ECR, KMS, ...) on loopback,
// for the cloud credential and KMS tests. pip-installed into the testbed cache on first use
// (`ensurePythonPackage('moto')`, python.ts) and run by the machine's python3.
import { fileURLToPath } from 'node:url';
import { freePort, type ManagedProcess, type ProcessGroup } from './process.js';
import { ensurePythonPackage, MOTO_VERSION } from './python.js';

export { MOTO_VERSION };

export interface Moto {
  /** `http://127.0.0.1:PORT` (https with `tls`), the endpoint for every AWS service moto serves. */
  readonly url: string;
  /** `127.0.0.1:PORT`, as an `awskms://<endpoint>/...` URI names it. */
  readonly endpoint: string;
  readonly process: ManagedProcess;
  /** Static test credentials and the region, for an AWS SDK or cosign talking to this server. */
  readonly clientEnv: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

export interface StartMotoOptions {
  readonly group: ProcessGroup;
  /** The account of every resource (`MOTO_ACCOUNT_ID`); moto's default otherwise. */
  readonly accountId?: string;
  readonly region?: string;
  /** Serve https with this certificate (PEM files). */
  readonly tls?: { readonly certPath: string; readonly keyPath: string; readonly pem: string };
  /**
   * Sign and verify `MessageType=DIGEST` requests as AWS KMS does: moto 5.2.5 hashes the digest
   * again. Runs moto through `python/moto_server_digest.py`, which changes nothing else.
   */
  readonly kmsDigests?: boolean;
  /** Progress of the first-use install (pip). */
  readonly onProgress?: (line: string) => void;
}

/** Starts `moto_server` on a free loopback port and waits until it answers. */
export async function startMoto(options: StartMotoOptions): Promise<Moto> {
  const install = await ensurePythonPackage(
    'moto',
    options.onProgress ? { onProgress: options.onProgress } : {},
  );
  const port = await freePort();
  const tls = options.tls;
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  const launcher = fileURLToPath(new URL('../python/moto_server_digest.py', import.meta.url));
  const serverArgs = ['-H', '127.0.0.1', '-p', String(port)];
  if (tls) serverArgs.push('--ssl-cert', tls.certPath, '--ssl-key', tls.keyPath);
  const managed = await options.group.start({
    name: `moto-${port}`,
    command: install.python,
    args: options.kmsDigests ? [launcher, ...serverArgs] : ['-m', 'moto.server', ...serverArgs],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      PYTHONPATH: install.path,
      HOME: options.group.runDir,
      ...(options.accountId ? { MOTO_ACCOUNT_ID: options.accountId } : {}),
    },
    ready: { kind: 'http', url: `${url}/moto-api/`, ...(tls ? { ca: tls.pem } : {}) },
    readyTimeoutMs: 60_000,
  });
  return {
    url,
    endpoint: `127.0.0.1:${port}`,
    process: managed,
    clientEnv: {
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_REGION: options.region ?? 'us-east-1',
      AWS_EC2_METADATA_DISABLED: 'true',
    },
    stop: () => managed.stop().then(() => undefined),
  };
}
