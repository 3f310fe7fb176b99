// What policy compiles fetch, each under the operator's allowances: KMS public keys (the clouds'
// own KMS endpoints and those listed with --kms-endpoint), remote policies and `remote` TrustRoots'
// TUF mirrors (through the private-address guard, with the hosts listed with --private-host).
// `serve`, `verify` and `audit` make them here, so the CLI refuses what the webhook refuses.
import { createKmsKeyFetcher } from '@signet/kms';
import {
  KmsKeyStore,
  type KmsKeyStoreOptions,
  type RemotePolicyFetch,
  type RemotePolicyOptions,
  RemoteTrustRoots,
  type RemoteTrustRootsOptions,
  remotePolicyFetcher,
} from '@signet/verifier';
import type { RegistrySettings } from './config.js';

/** The operator's allowances, as the flags give them. */
export type OutboundSettings = Pick<RegistrySettings, 'privateHosts' | 'kmsEndpoints'>;

/** KMS keys, fetched with the SDKs' default credentials, only from allowed endpoints. */
export function kmsKeyStore(
  settings: OutboundSettings,
  options: Omit<KmsKeyStoreOptions, 'fetcher'> = {},
): KmsKeyStore {
  const fetcher = createKmsKeyFetcher({ endpoints: settings.kmsEndpoints });
  // Apply-time validation checks a `key.kms` for form and an allowed endpoint, without fetching it.
  return new KmsKeyStore({ ...options, fetcher, checkUri: (uri) => fetcher.check?.(uri) });
}

/** Remote policies, through the private-address guard. */
export function remotePolicies(
  settings: OutboundSettings,
  options: Omit<RemotePolicyOptions, 'privateHosts'> = {},
): RemotePolicyFetch {
  return remotePolicyFetcher({ ...options, privateHosts: settings.privateHosts });
}

/** `remote` TrustRoots, their mirrors through the private-address guard. */
export function remoteTrustRoots(
  settings: OutboundSettings,
  options: Omit<RemoteTrustRootsOptions, 'privateHosts'> = {},
): RemoteTrustRoots {
  return new RemoteTrustRoots({ ...options, privateHosts: settings.privateHosts });
}
