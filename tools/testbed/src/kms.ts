// KMS servers on loopback for the KMS tests: moto's AWS server (the real AWS KMS API model, PyPI
// `moto[server]`) and a stand-in for Vault's transit engine (Vault does not build from the Go
// module proxy). Both keep their keys in memory: every start is a fresh KMS.
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand } from './exec.js';
import { freePort, type ManagedProcess, type ProcessGroup } from './process.js';
import { ensurePythonPackage } from './python.js';

/** A self-signed server certificate for 127.0.0.1 and localhost, from the openssl CLI. */
export interface ServerCertificate {
  readonly certPath: string;
  readonly keyPath: string;
  /** The certificate itself, which is also the CA clients trust. */
  readonly pem: string;
}

export async function mintServerCertificate(dir: string, name = 'server'): Promise<ServerCertificate> {
  await mkdir(dir, { recursive: true });
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  await runCommand(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ],
    { timeoutMs: 30_000 },
  );
  return { certPath, keyPath, pem: await readFile(certPath, 'utf8') };
}

export interface Moto {
  readonly process: ManagedProcess;
  /** `http://127.0.0.1:<port>` or `https://...` with `tls`. */
  readonly url: string;
  /** `127.0.0.1:<port>`, as an `awskms://<endpoint>/...` URI names it. */
  readonly endpoint: string;
  /** Environment for an AWS SDK or cosign talking to this server (static test credentials). */
  readonly clientEnv: NodeJS.ProcessEnv;
}

/**
 * Starts moto's server (all AWS APIs, KMS among them) with `accountId` as the account of every
 * resource. With `tls`, it serves https with that certificate. Sign/Verify with
 * `MessageType=DIGEST` (what cosign sends) sign the digest as AWS KMS does: moto 5.2.5 itself
 * hashes it again; `python/moto_server_digest.py` closes that gap and changes nothing else.
 */
export async function startMoto(options: {
  readonly group: ProcessGroup;
  readonly accountId?: string;
  readonly region?: string;
  readonly tls?: ServerCertificate;
  readonly onProgress?: (line: string) => void;
}): Promise<Moto> {
  const install = await ensurePythonPackage(
    'moto',
    options.onProgress ? { onProgress: options.onProgress } : {},
  );
  const port = await freePort();
  const tls = options.tls;
  // moto's server through a launcher that makes its KMS sign digests as AWS does (see the file).
  const launcher = fileURLToPath(new URL('../python/moto_server_digest.py', import.meta.url));
  const args = [launcher, '-H', '127.0.0.1', '-p', String(port)];
  if (tls) args.push('--ssl-cert', tls.certPath, '--ssl-key', tls.keyPath);
  const process_ = await options.group.start({
    name: 'moto',
    command: install.python,
    args,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      PYTHONPATH: install.path,
      MOTO_ACCOUNT_ID: options.accountId ?? '123456789012',
    },
    ready: { kind: 'tcp', port },
    readyTimeoutMs: 60_000,
  });
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  return {
    process: process_,
    url,
    endpoint: `127.0.0.1:${port}`,
    clientEnv: {
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_REGION: options.region ?? 'us-east-2',
      AWS_EC2_METADATA_DISABLED: 'true',
    },
  };
}

export interface Vault {
  readonly process: ManagedProcess;
  readonly address: string;
  readonly rootToken: string;
  /** `VAULT_ADDR` and `VAULT_TOKEN` for cosign or Signet. */
  readonly clientEnv: NodeJS.ProcessEnv;
  /** Calls the HTTP API with the root token. */
  api(method: string, path: string, body?: unknown): Promise<unknown>;
}

/**
 * Starts a stand-in for Vault's transit engine (`python/vault_transit.py`: Vault's HTTP API for
 * transit keys, signing and the Kubernetes auth login, with a root token). Vault itself does not
 * build from the Go module proxy (see that file). `kubernetesRoles` maps a role to the service
 * account token its login accepts.
 */
export async function startVault(options: {
  readonly group: ProcessGroup;
  readonly kubernetesRoles?: Readonly<Record<string, string>>;
  readonly onProgress?: (line: string) => void;
}): Promise<Vault> {
  const install = await ensurePythonPackage(
    'tuf',
    options.onProgress ? { onProgress: options.onProgress } : {},
  );
  const port = await freePort();
  const address = `http://127.0.0.1:${port}`;
  const rootToken = 'signet-test-root-token';
  const script = fileURLToPath(new URL('../python/vault_transit.py', import.meta.url));
  const roles = Object.entries(options.kubernetesRoles ?? {}).map(([role, jwt]) => `${role}=${jwt}`);
  const process_ = await options.group.start({
    name: 'vault-transit',
    command: install.python,
    args: [script, String(port), rootToken, ...roles],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONPATH: install.path },
    ready: { kind: 'http', url: `${address}/v1/sys/health` },
    readyTimeoutMs: 30_000,
  });
  const api = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const response = await fetch(`${address}/v1/${path}`, {
      method,
      headers: { 'X-Vault-Token': rootToken, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`vault ${method} ${path}: ${response.status} ${text}`);
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  };
  await api('POST', 'sys/mounts/transit', { type: 'transit' });
  return {
    process: process_,
    address,
    rootToken,
    clientEnv: { VAULT_ADDR: address, VAULT_TOKEN: rootToken },
    api,
  };
}
