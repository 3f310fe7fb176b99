// For the KMS tests: a stand-in for Vault's transit engine (Vault does not build from the Go module
// proxy) that keeps its keys in memory. moto's AWS KMS is `startMoto` (moto.ts); loopback
// certificates for both are `mintServerCertificate` (tls.ts).
import { fileURLToPath } from 'node:url';
import { freePort, type ManagedProcess, type ProcessGroup } from './process.js';
import { ensurePythonPackage } from './python.js';

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
