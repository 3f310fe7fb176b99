// Azure Key Vault: `getKey` with @azure/keyvault-keys and, unless a credential is injected,
// @azure/identity's DefaultAzureCredential (environment, Azure Workload Identity, managed
// identity, Azure CLI...). The JSON Web Key it returns becomes a PEM public key.
import type { KmsPublicKey } from '@signet/verifier';
import { hashOfCurve, pemFromJwk } from './public-key.js';
import type { KmsKeyRef } from './uri.js';

export type AzureKeyRef = Extract<KmsKeyRef, { provider: 'azure' }>;

/** What `@azure/core-auth`'s TokenCredential is, without importing it eagerly. */
export interface AzureTokenCredential {
  getToken(
    scopes: string | string[],
    options?: { abortSignal?: AbortSignal },
  ): Promise<{ token: string; expiresOnTimestamp: number } | null>;
}

export interface AzureOptions {
  /** Default: `new DefaultAzureCredential()`. */
  readonly credential?: AzureTokenCredential;
  /** Extra CA certificates (PEM) for the vault's TLS, e.g. a private endpoint's or an emulator's. */
  readonly ca?: string;
  /**
   * Skips the check that the vault's authentication challenge names a Key Vault resource of the
   * vault's own domain. Only for emulators on loopback, as the Azure SDK documents.
   */
  readonly disableChallengeResourceVerification?: boolean;
}

type AzureJwk = {
  readonly kty?: string;
  readonly crv?: string;
  readonly x?: Uint8Array;
  readonly y?: Uint8Array;
  readonly n?: Uint8Array;
  readonly e?: Uint8Array;
};

export async function fetchAzureKey(
  ref: AzureKeyRef,
  signal: AbortSignal,
  options: AzureOptions,
): Promise<KmsPublicKey> {
  // Loaded on first use: callers that name no Azure key never load the SDKs.
  const { KeyClient } = await import('@azure/keyvault-keys');
  const credential = options.credential ?? new (await import('@azure/identity')).DefaultAzureCredential();
  const client = new KeyClient(ref.vaultUrl, credential, {
    retryOptions: { maxRetries: 0 },
    ...(options.ca === undefined ? {} : { tlsOptions: { ca: options.ca } }),
    ...(options.disableChallengeResourceVerification ? { disableChallengeResourceVerification: true } : {}),
  });
  const key = await client.getKey(ref.keyName, {
    abortSignal: signal,
    ...(ref.version === undefined ? {} : { version: ref.version }),
  });
  const jwk = key.key as AzureJwk | undefined;
  if (jwk === undefined) throw new Error('the vault returned no key material');
  return { pem: pemFromJwk(nodeJwk(jwk)), hashAlgorithm: hashOfCurve(jwk.crv) };
}

const b64url = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('base64url');

function nodeJwk(jwk: AzureJwk): Record<string, string> {
  const kty = jwk.kty?.replace(/-HSM$/, '');
  if (kty === 'EC') return { kty, crv: jwk.crv ?? '', x: b64url(jwk.x), y: b64url(jwk.y) };
  if (kty === 'RSA') return { kty, n: b64url(jwk.n), e: b64url(jwk.e) };
  throw new Error(`key type ${JSON.stringify(jwk.kty)} cannot verify signatures`);
}
