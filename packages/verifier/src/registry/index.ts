// The registry layer's public API: what `@signet/verifier` exports from `src/registry/`.
//
//   const client = new RegistryClient({ credentials: Keychain.fromSecrets(pullSecrets) });
//   const call = { signal: request.signal, deadline: client.deadlineIn(5_000) };
//   const digest = await client.resolveDigest({ registry, repository, tag }, call);
//   const { artifacts, truncated } = await discoverArtifacts(
//     client,
//     { image: { registry, repository, digest }, legacySignatures: true, legacyAttestations: true, bundles: true },
//     call,
//   );
//
// Everything throws `RegistryError` (or `PullSecretError` for unreadable pull secrets);
// `isInfrastructureFailure(error)` says whether a failure means "could not be checked".
export { AuthCache, type AuthCacheOptions } from './auth.js';
export {
  DEFAULT_REGISTRY_LIMITS,
  type FetchedManifest,
  type Referrers,
  RegistryClient,
  type RegistryClientOptions,
  type RegistryLimits,
  type TagRef,
} from './client.js';
export { type Clock, systemClock } from './clock.js';
export type { RegistryCall } from './deadline.js';
export {
  type ArtifactStore,
  DEFAULT_DISCOVERY_LIMITS,
  type Discovery,
  type DiscoveryLimits,
  discoverArtifacts,
  type Skipped,
  type Truncation,
} from './discovery.js';
export { isInfrastructureFailure, RegistryError, type RegistryErrorCode } from './errors.js';
export type { FetchFunction, HttpTransportOptions } from './http.js';
export { type CredentialSource, Keychain } from './keychain.js';
export type { Descriptor, ImageIndex, ImageManifest, Manifest } from './manifest.js';
export {
  type CredentialEntry,
  credentialsFromDockerConfig,
  credentialsFromSecret,
  PullSecretError,
  type RegistryCredential,
} from './pull-secrets.js';
export type { RetryPolicy } from './retry.js';
