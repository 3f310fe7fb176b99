/**
 * @signet/registry: the OCI registry client Signet verifies images with. It resolves tags, reads
 * manifests, blobs and referrers (the OCI 1.1 API or the `sha256-<hex>` fallback tag) with Basic
 * and Bearer auth, pull-secret keychains, cloud credential providers (ECR, GCP, ACR, their SDKs
 * loaded on first use), proxies, private CAs, a deadline on every call, retries inside it, byte
 * caps and digest checks on everything it reads. Its outbound network (`net/`) guards every host
 * that someone other than the operator names; TUF, KMS and remote policies use it too.
 *
 * The surface is pinned by `test/index.test.ts`.
 */
export type {
  ArtifactQuery,
  ArtifactSource,
  ArtifactTypeMatch,
  DigestTagQuery,
  DiscoveryRequest,
  LayerPick,
  ListedAnnotationMatch,
  ReferrersQuery,
  StoredArtifact,
  UnreadableCandidate,
} from './artifacts.js';
export {
  type FetchedManifest,
  type Referrers,
  RegistryClient,
  type RegistryClientOptions,
  type RegistryLimits,
  type TagRef,
} from './client.js';
export type { Clock } from './clock.js';
export { AcrCredentials, type AcrCredentialsOptions } from './cloud/acr.js';
export { EcrCredentials, type EcrCredentialsOptions, type EcrRegistry } from './cloud/ecr.js';
export { GcpCredentials, type GcpCredentialsOptions } from './cloud/gcp.js';
export type { CloudProviderName, CredentialProvider, ProviderContext } from './cloud/provider.js';
export { CLOUD_PROVIDER_NAMES, createCloudProviders, isCloudProviderName } from './cloud/providers.js';
export { SdkNotInstalledError } from './cloud/sdk.js';
export { fetchConfigFiles } from './config-files.js';
export type { RegistryCall } from './deadline.js';
export {
  ArtifactDiscovery,
  type ArtifactStore,
  type Discovery,
  type DiscoveryLimits,
  type Truncation,
} from './discovery.js';
export { isInfrastructureFailure, RegistryError, type RegistryErrorCode } from './errors.js';
export { type CredentialSource, Keychain } from './keychain.js';
export type { Descriptor, ImageIndex, ImageManifest, Manifest } from './manifest.js';
export { BodyTooLargeError, cancelQuietly, readCappedBody } from './net/capped-body.js';
export { createDispatcher, type NetworkOptions, proxySettings } from './net/dispatcher.js';
export { type HostChooser, OutboundNetwork, type OutboundOptions } from './net/outbound.js';
export { dispatchFetch, type FetchFunction, type FetchInit, type FetchResponse } from './net/request.js';
export {
  isTransportFailure,
  UnreachableError,
  type UnreachableReason,
  unreachable,
} from './net/unreachable.js';
export {
  type CredentialEntry,
  credentialsFromDockerConfig,
  credentialsFromSecret,
  PullSecretError,
  type RegistryCredential,
} from './pull-secrets.js';
export type { DigestRef, RepositoryRef } from './references.js';
