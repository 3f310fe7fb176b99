/**
 * @signet/verifier: finds and verifies the Sigstore/cosign signatures and attestations of
 * container images against compiled ClusterImagePolicies. The registry layer (`registry/`) finds
 * what is stored next to an image; the signature layer (`sigstore/`, `trust/`, `policy/`) decides
 * whether it satisfies a policy; `ImageVerifier` puts them together, with a cache of passes.
 *
 * The surface is what a caller needs to verify images: compile policies, verify, read the
 * results, supply credentials and trust roots. It is pinned by `test/index.test.ts`.
 */
export type { DigestRef, RepositoryRef } from './artifacts.js';
export { type CacheResult, VerificationCache, type VerificationCacheOptions } from './cache.js';
export {
  type ImageToVerify,
  type ImageVerification,
  ImageVerifier,
  type ImageVerifierOptions,
  type PolicyToVerify,
  type VerifyOptions,
} from './image-verifier.js';
export { createDispatcher, type NetworkOptions, proxySettings } from './net/dispatcher.js';
export { dispatchFetch, type FetchFunction, type FetchInit, type FetchResponse } from './net/request.js';
export {
  isTransportFailure,
  UnreachableError,
  type UnreachableReason,
  unreachable,
} from './net/unreachable.js';
export type { PassRecords, RecordedPass } from './pass-records.js';
export {
  type CelEvaluator,
  type CelHost,
  type CelOutcome,
  DEFAULT_CEL_COST_LIMIT,
} from './policy/cel-host.js';
export {
  CelSyntaxError,
  CelWorkers,
  CelWorkersError,
  type CelWorkersErrorCode,
  type CelWorkersEvent,
  type CelWorkersOptions,
} from './policy/cel-workers.js';
export {
  type CompileContext,
  type CompiledAuthorities,
  type CompiledAuthority,
  compileAuthorities,
} from './policy/compile.js';
export type {
  EngineLanguage,
  EngineOutcome,
  EngineProgram,
  PolicyEngineHost,
  RemotePolicyFetch,
} from './policy/engines.js';
export { type PolicyCompileCode, PolicyCompileError } from './policy/errors.js';
export type { SecretLookup } from './policy/keys.js';
export {
  KmsKeyError,
  type KmsKeyEvent,
  type KmsKeyFetcher,
  type KmsKeyLookup,
  type KmsKeySource,
  KmsKeyStore,
  type KmsKeyStoreOptions,
  type KmsPublicKey,
} from './policy/kms-keys.js';
export type { ConfigMapLookup } from './policy/programs.js';
export { RemotePolicyError, type RemotePolicyOptions, remotePolicyFetcher } from './policy/remote-policy.js';
export type { ArtifactCounts, AuthorityCheck, CheckFailure, RejectedArtifact } from './policy/results.js';
export type { PolicyCheck, SpecPolicyInputs } from './policy/verify-policy.js';
export { RegistryClient, type RegistryClientOptions } from './registry/client.js';
export { AcrCredentials, type AcrCredentialsOptions } from './registry/cloud/acr.js';
export { EcrCredentials, type EcrCredentialsOptions, type EcrRegistry } from './registry/cloud/ecr.js';
export { GcpCredentials, type GcpCredentialsOptions } from './registry/cloud/gcp.js';
export type { CloudProviderName, CredentialProvider, ProviderContext } from './registry/cloud/provider.js';
export {
  CLOUD_PROVIDER_NAMES,
  createCloudProviders,
  isCloudProviderName,
} from './registry/cloud/providers.js';
export type { DiscoveryLimits } from './registry/discovery.js';
export { isInfrastructureFailure, RegistryError, type RegistryErrorCode } from './registry/errors.js';
export { type CredentialSource, Keychain } from './registry/keychain.js';
export {
  type CredentialEntry,
  credentialsFromDockerConfig,
  credentialsFromSecret,
  PullSecretError,
  type RegistryCredential,
} from './registry/pull-secrets.js';
export { type CheckCode, SignatureCheckError } from './sigstore/errors.js';
export type { SignerIdentity, VerifiedArtifact } from './sigstore/verify.js';
export { TagCache, type TagCacheOptions } from './tag-cache.js';
export { type TrustRootOptions, type TrustRootResolver, trustRootResolver } from './trust/compile.js';
export { TrustRootError, type TrustRootErrorCode } from './trust/errors.js';
export {
  type LivingRootEvent,
  type LivingRootSource,
  LivingTrustRoot,
  type LivingTrustRootOptions,
} from './trust/living-root.js';
export { type LivingPublicGoodOptions, livingPublicGoodRoot } from './trust/public-good.js';
export { RemoteTrustRoots, type RemoteTrustRootsOptions } from './trust/remote-roots.js';
export { type CompiledTrustRoot, trustRootFromJSON } from './trust/trusted-root.js';
export type { TufClient, TufRequest, TufResult } from './trust/tuf.js';
