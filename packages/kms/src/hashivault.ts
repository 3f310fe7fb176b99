// HashiCorp Vault (or OpenBao) transit engine: `GET /v1/<mount>/keys/<name>` over Vault's HTTP API,
// the public key of the latest version, as cosign's hashivault provider reads it. Address, token,
// namespace and mount come from the same environment variables as cosign's (VAULT_ADDR,
// VAULT_TOKEN, VAULT_NAMESPACE, TRANSIT_SECRET_ENGINE_PATH); without a token, the Kubernetes auth
// method logs in with the Pod's service-account token when VAULT_KUBERNETES_ROLE names a role.
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { KmsPublicKey } from '@signet/verifier';
import { pemFromEd25519, pemFromPem } from './public-key.js';
import type { KmsKeyRef } from './uri.js';

export type VaultKeyRef = Extract<KmsKeyRef, { provider: 'hashivault' }>;

export interface VaultOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly fetch: typeof fetch;
  /** The Pod's service-account token, for the Kubernetes auth method. */
  readonly serviceAccountTokenFile?: string;
}

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';
const MAX_BODY_BYTES = 1024 * 1024;

export async function fetchVaultKey(
  ref: VaultKeyRef,
  signal: AbortSignal,
  options: VaultOptions,
): Promise<KmsPublicKey> {
  const { env } = options;
  const address = (env.VAULT_ADDR ?? env.BAO_ADDR ?? '').replace(/\/+$/, '');
  if (address === '') throw new Error('VAULT_ADDR is not set');
  const mount = (env.TRANSIT_SECRET_ENGINE_PATH || 'transit').replace(/^\/+|\/+$/g, '');
  const headers: Record<string, string> = { 'X-Vault-Token': await vaultToken(address, signal, options) };
  if (env.VAULT_NAMESPACE) headers['X-Vault-Namespace'] = env.VAULT_NAMESPACE;
  const body = await vaultJson(options.fetch, `${address}/v1/${mount}/keys/${ref.keyName}`, {
    headers,
    signal,
  });
  return publicKeyOf(body);
}

async function vaultToken(address: string, signal: AbortSignal, options: VaultOptions): Promise<string> {
  const { env } = options;
  const token = env.VAULT_TOKEN ?? env.BAO_TOKEN;
  if (token) return token;
  const role = env.VAULT_KUBERNETES_ROLE;
  if (role) {
    const jwt = (await readFile(options.serviceAccountTokenFile ?? SERVICE_ACCOUNT_TOKEN, 'utf8')).trim();
    const mount = (env.VAULT_KUBERNETES_MOUNT || 'kubernetes').replace(/^\/+|\/+$/g, '');
    const login = await vaultJson(options.fetch, `${address}/v1/auth/${mount}/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ role, jwt }),
      signal,
    });
    const clientToken = (login as { auth?: { client_token?: unknown } }).auth?.client_token;
    if (typeof clientToken !== 'string' || clientToken === '')
      throw new Error('Kubernetes login returned no token');
    return clientToken;
  }
  const home = env.HOME ?? homedir();
  const fromFile = await readFile(join(home, '.vault-token'), 'utf8').catch(() => '');
  if (fromFile.trim() !== '') return fromFile.trim();
  throw new Error('no Vault token: set VAULT_TOKEN, or VAULT_KUBERNETES_ROLE for the Kubernetes auth method');
}

async function vaultJson(fetchImpl: typeof fetch, url: string, init: RequestInit): Promise<unknown> {
  const response = await fetchImpl(url, { ...init, redirect: 'error' });
  const text = await boundedText(response);
  if (!response.ok) {
    // Vault's error bodies are `{"errors": [...]}`: never secrets, and they say what is wrong.
    throw new Error(`Vault answered ${response.status} for ${new URL(url).pathname}: ${text.slice(0, 300)}`);
  }
  return JSON.parse(text) as unknown;
}

async function boundedText(response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES) throw new Error(`Vault answer of ${declared} bytes is too large`);
  const text = await response.text();
  if (text.length > MAX_BODY_BYTES) throw new Error('Vault answer is too large');
  return text;
}

interface TransitKeyVersion {
  readonly public_key?: unknown;
  readonly name?: unknown;
}

function publicKeyOf(body: unknown): KmsPublicKey {
  const data = (body as { data?: { keys?: Record<string, TransitKeyVersion>; latest_version?: unknown } })
    .data;
  const latest = data?.latest_version;
  const version = data?.keys?.[String(latest)];
  if (version === undefined || typeof version.public_key !== 'string' || version.public_key === '') {
    throw new Error(
      'the transit key has no public key for its latest version (is it an asymmetric signing key?)',
    );
  }
  // Vault gives Ed25519 keys as base64 of the raw 32 bytes, every other type as PEM.
  if (version.name === 'ed25519') return { pem: pemFromEd25519(Buffer.from(version.public_key, 'base64')) };
  return { pem: pemFromPem(version.public_key) };
}
