// The cloud credential providers a deployment enables by name (`signet serve --cloud-credentials`).
import { AcrCredentials } from './acr.js';
import { EcrCredentials } from './ecr.js';
import { GcpCredentials } from './gcp.js';
import type { CloudProviderName, CredentialProvider } from './provider.js';

export const CLOUD_PROVIDER_NAMES: readonly CloudProviderName[] = ['ecr', 'gcp', 'acr'];

export function isCloudProviderName(name: string): name is CloudProviderName {
  return (CLOUD_PROVIDER_NAMES as readonly string[]).includes(name);
}

/** One provider per name, in the order given; each loads its SDK only when first asked. */
export function createCloudProviders(
  names: readonly CloudProviderName[],
  options: { readonly env?: NodeJS.ProcessEnv } = {},
): CredentialProvider[] {
  const env = options.env === undefined ? {} : { env: options.env };
  return [...new Set(names)].map((name) => {
    if (name === 'ecr') return new EcrCredentials(env);
    if (name === 'gcp') return new GcpCredentials();
    return new AcrCredentials(env);
  });
}
