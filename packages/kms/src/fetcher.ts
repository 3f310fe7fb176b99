// The `KmsKeyFetcher` for @signet/verifier's `KmsKeyStore`: picks the provider by URI scheme and
// loads that provider's SDK only when a key of its kind is first fetched.
import type { KmsKeyFetcher, KmsPublicKey } from '@signet/verifier';
import type { AwsOptions } from './aws.js';
import type { AzureOptions } from './azure.js';
import type { GcpOptions } from './gcp.js';
import { parseKmsUri } from './uri.js';

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
}

export function createKmsKeyFetcher(options: KmsFetcherOptions = {}): KmsKeyFetcher {
  const env = options.env ?? process.env;
  // Not `?? fetch`: reading the global loads Node's built-in HTTP client (about 3 MiB of heap) at
  // start-up, for clusters that may never use Vault or Cloud KMS.
  const fetchImpl: typeof fetch = options.fetch ?? ((input, init) => fetch(input, init));
  return async (uri, signal): Promise<KmsPublicKey> => {
    const ref = parseKmsUri(uri);
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
  };
}
