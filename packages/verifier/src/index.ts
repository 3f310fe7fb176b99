/**
 * @signet/verifier: finds and verifies the Sigstore/cosign signatures and attestations of
 * container images against compiled ClusterImagePolicies. The registry client (`@signet/registry`)
 * reads what is stored next to an image; the signature layer (`sigstore/`, `trust/`, `policy/`)
 * decides whether it satisfies a policy; `ImageVerifier` puts them together, with a cache of passes.
 *
 * The surface is what a caller needs to verify images: compile policies, verify, read the
 * results, supply trust roots and KMS keys. Registry clients, credentials and the outbound network
 * come from `@signet/registry`. It is pinned by `test/index.test.ts`.
 */
export { type CacheResult, VerificationCache, type VerificationCacheOptions } from './cache.js';
export {
  type Evidence,
  type EvidenceNoun,
  type FormatQuery,
  SIGNATURE_FORMATS,
  type SignatureFormat,
  type SignatureFormats,
} from './formats/index.js';
export {
  type ImageToVerify,
  type ImageVerification,
  ImageVerifier,
  type ImageVerifierOptions,
  type VerifyOptions,
} from './image-verifier.js';
export type { PassRecords, RecordedPass } from './pass-records.js';
export type { CelEvaluator, CelHost, CelOutcome } from './policy/cel-host.js';
export {
  CelWorkers,
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
  type KmsKeyEvent,
  type KmsKeyFetcher,
  type KmsKeyLookup,
  type KmsKeySource,
  KmsKeyStore,
  type KmsKeyStoreOptions,
  type KmsPublicKey,
} from './policy/kms-keys.js';
export { compileImagePolicyAuthorities } from './policy/namespaced.js';
export type { ConfigMapLookup } from './policy/programs.js';
export { type RemotePolicyOptions, remotePolicyFetcher } from './policy/remote-policy.js';
export type { ArtifactCounts, AuthorityCheck, CheckFailure, RejectedArtifact } from './policy/results.js';
export type { PolicyCheck, SpecPolicyInputs } from './policy/verify-policy.js';
export type { CheckCode, SignatureCheckError } from './sigstore/errors.js';
export type { SignerIdentity, VerifiedArtifact } from './sigstore/verify.js';
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
