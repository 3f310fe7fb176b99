// Google Cloud KMS over its REST API, authenticated by google-auth-library's Application Default
// Credentials (GOOGLE_APPLICATION_CREDENTIALS, GKE Workload Identity through the metadata server,
// gcloud's credentials). Without a version in the URI, the newest enabled version is used, as
// cosign's gcpkms provider does.
import type { KmsPublicKey } from '@signet/verifier';
import { pemFromPem } from './public-key.js';
import type { KmsKeyRef } from './uri.js';

export type GcpKeyRef = Extract<KmsKeyRef, { provider: 'gcp' }>;

export interface GcpOptions {
  readonly fetch: typeof fetch;
  /** Cloud KMS API base URL (default `https://cloudkms.googleapis.com`), e.g. a Private Service Connect endpoint. */
  readonly endpoint?: string;
  /** Authorization headers for a request; default: Application Default Credentials. */
  readonly authorize?: (url: string) => Promise<Headers>;
}

const SCOPE = 'https://www.googleapis.com/auth/cloudkms';
const MAX_BODY_BYTES = 1024 * 1024;

export async function fetchGcpKey(
  ref: GcpKeyRef,
  signal: AbortSignal,
  options: GcpOptions,
): Promise<KmsPublicKey> {
  const base = (options.endpoint ?? 'https://cloudkms.googleapis.com').replace(/\/+$/, '');
  const authorize = options.authorize ?? (await applicationDefault());
  const get = async (path: string): Promise<Record<string, unknown>> => {
    const url = `${base}/v1/${path}`;
    const response = await options.fetch(url, { headers: await authorize(url), signal, redirect: 'error' });
    const text = await response.text();
    if (text.length > MAX_BODY_BYTES) throw new Error('Cloud KMS answer is too large');
    if (!response.ok)
      throw new Error(`Cloud KMS answered ${response.status} for ${path}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const key = await get(ref.cryptoKey);
  if (key.purpose !== 'ASYMMETRIC_SIGN')
    throw new Error(`key purpose is ${String(key.purpose)}, not ASYMMETRIC_SIGN`);
  const version =
    ref.version === undefined
      ? await newestEnabled(get, ref.cryptoKey)
      : `${ref.cryptoKey}/cryptoKeyVersions/${ref.version}`;
  const answer = await get(`${version}/publicKey`);
  if (typeof answer.pem !== 'string') throw new Error('publicKey returned no pem');
  return { pem: pemFromPem(answer.pem), hashAlgorithm: hashOfAlgorithm(answer.algorithm) };
}

async function newestEnabled(
  get: (path: string) => Promise<Record<string, unknown>>,
  cryptoKey: string,
): Promise<string> {
  const query = new URLSearchParams({ filter: 'state=ENABLED', orderBy: 'name desc', pageSize: '1' });
  const list = await get(`${cryptoKey}/cryptoKeyVersions?${query}`);
  const versions = list.cryptoKeyVersions as { name?: unknown }[] | undefined;
  const name = versions?.[0]?.name;
  if (typeof name !== 'string') throw new Error('the key has no enabled version');
  return name;
}

function hashOfAlgorithm(algorithm: unknown): string | undefined {
  const digest = typeof algorithm === 'string' ? /_SHA(256|384|512)$/.exec(algorithm)?.[1] : undefined;
  return digest === undefined ? undefined : `sha${digest}`;
}

async function applicationDefault(): Promise<(url: string) => Promise<Headers>> {
  // Loaded on first use: callers that name no Cloud KMS key never load google-auth-library.
  const { GoogleAuth } = await import('google-auth-library');
  const client = await new GoogleAuth({ scopes: [SCOPE] }).getClient();
  return (url) => client.getRequestHeaders(url);
}
