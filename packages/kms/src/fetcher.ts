// The `KmsKeyFetcher` for @signet/verifier's `KmsKeyStore`: picks the provider by URI scheme and
// loads that provider's SDK only when a key of its kind is first fetched. Its `check` refuses,
// without any I/O, a URI that is malformed or names a host that is neither the cloud's KMS nor
// listed by the operator (see endpoints.ts); the fetch itself checks again before any request.
// A failure to reach the KMS is said in a short class ("could not reach HOST: the TLS handshake
// failed"), the transport's own text kept as the cause, for the log.
import { isTransportFailure, unreachable } from '@signet/registry';
import type { KmsKeyFetcher, KmsPublicKey } from '@signet/verifier';
import type { AwsOptions } from './aws.js';
import type { AzureOptions } from './azure.js';
import { KmsEndpoints } from './endpoints.js';
import type { GcpOptions } from './gcp.js';
import { type KmsKeyRef, parseKmsUri } from './uri.js';

export interface KmsFetcherOptions {
  /** Environment the providers read (VAULT_ADDR, ...); default `process.env`. The SDKs read the process's own. */
  readonly env?: NodeJS.ProcessEnv;
  /** For Vault and Cloud KMS (the AWS and Azure SDKs bring their own HTTP clients). */
  readonly fetch?: typeof fetch;
  readonly aws?: AwsOptions;
  readonly azure?: AzureOptions;
  readonly gcp?: Omit<GcpOptions, 'fetch'>;
  /** Service-account token for Vault's Kubernetes auth method (default: the Pod's). */
  readonly serviceAccountTokenFile?: string;
  /**
   * Hosts (`host[:port]`) an `awskms://` or `azurekms://` URI may name besides AWS KMS endpoints
   * and Key Vault hosts (`--kms-endpoint`): LocalStack, an emulator, a private endpoint's own name.
   */
  readonly endpoints?: Iterable<string>;
}

export function createKmsKeyFetcher(options: KmsFetcherOptions = {}): KmsKeyFetcher {
  const env = options.env ?? process.env;
  // Not `?? fetch`: reading the global loads Node's built-in HTTP client (about 3 MiB of heap) at
  // start-up, for clusters that may never use Vault or Cloud KMS.
  const fetchImpl: typeof fetch = options.fetch ?? ((input, init) => fetch(input, init));
  const endpoints = new KmsEndpoints(options.endpoints);
  const check = (uri: string): KmsKeyRef => {
    const ref = parseKmsUri(uri);
    endpoints.check(ref);
    return ref;
  };
  const fetcher = async (uri: string, signal: AbortSignal): Promise<KmsPublicKey> => {
    const ref = check(uri);
    try {
      return await fetchKey(ref, signal, options, env, fetchImpl);
    } catch (error) {
      if (isTransportFailure(error)) throw unreachable(hostOf(ref, options, env), error);
      throw error;
    }
  };
  return Object.assign(fetcher, { check: (uri: string) => void check(uri) });
}

async function fetchKey(
  ref: KmsKeyRef,
  signal: AbortSignal,
  options: KmsFetcherOptions,
  env: NodeJS.ProcessEnv,
  fetchImpl: typeof fetch,
): Promise<KmsPublicKey> {
  switch (ref.provider) {
    case 'aws':
      return (await import('./aws.js')).fetchAwsKey(ref, signal, options.aws ?? {});
    case 'gcp':
      return (await import('./gcp.js')).fetchGcpKey(ref, signal, { ...options.gcp, fetch: fetchImpl });
    case 'azure':
      return (await import('./azure.js')).fetchAzureKey(ref, signal, options.azure ?? {});
    case 'hashivault': {
      const token = options.serviceAccountTokenFile;
      const vault = {
        env,
        fetch: fetchImpl,
        ...(token === undefined ? {} : { serviceAccountTokenFile: token }),
      };
      return (await import('./hashivault.js')).fetchVaultKey(ref, signal, vault);
    }
  }
}

/** The host a fetch of `ref` goes to, as a "could not reach" message names it. */
function hostOf(ref: KmsKeyRef, options: KmsFetcherOptions, env: NodeJS.ProcessEnv): string {
  const hostIn = (url: string | undefined) => (url === undefined ? undefined : URL.parse(url)?.host);
  switch (ref.provider) {
    case 'aws':
      return ref.endpoint ?? `AWS KMS${ref.region === undefined ? '' : ` in ${ref.region}`}`;
    case 'gcp':
      return hostIn(options.gcp?.endpoint) ?? 'cloudkms.googleapis.com';
    case 'azure':
      return hostIn(ref.vaultUrl) ?? ref.vaultUrl;
    case 'hashivault':
      return hostIn(env.VAULT_ADDR ?? env.BAO_ADDR) ?? 'Vault';
  }
}
