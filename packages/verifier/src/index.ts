/**
 * @signet/verifier: finds and verifies the Sigstore/cosign signatures and attestations of
 * container images against compiled ClusterImagePolicies. The registry layer (`registry/`) finds
 * what is stored next to an image; the signature layer (`sigstore/`, `trust/`, `policy/`) decides
 * whether it satisfies a policy; `ImageVerifier` puts them together, with a cache of passes.
 */
export type * from './artifacts.js';
export { type CacheResult, VerificationCache, type VerificationCacheOptions } from './cache.js';
export {
  type ImageToVerify,
  type ImageVerification,
  ImageVerifier,
  type ImageVerifierOptions,
  type PolicyToVerify,
  type VerifyOptions,
} from './image-verifier.js';
export {
  type AuthoritySource,
  type CompileContext,
  type CompiledAttestation,
  type CompiledAuthorities,
  type CompiledAuthority,
  type CompiledSpecPolicy,
  compileAuthorities,
  DEFAULT_SYSTEM_NAMESPACE,
  requirementsOf,
} from './policy/compile.js';
export { type PolicyCompileCode, PolicyCompileError } from './policy/errors.js';
export { attestationBindings, discoveryRequests, verifyAuthority } from './policy/evaluate.js';
export type { SecretLookup } from './policy/keys.js';
export { PREDICATE_TYPES, predicateTypeURI } from './policy/predicate-types.js';
export type { ConfigMapLookup } from './policy/programs.js';
export type { ArtifactCounts, AuthorityCheck, CheckFailure, RejectedArtifact } from './policy/results.js';
export {
  authorityMatches,
  type PolicyCheck,
  type SpecPolicyInputs,
  verifyPolicy,
} from './policy/verify-policy.js';
export * from './registry/index.js';
export { type CheckCode, SignatureCheckError } from './sigstore/errors.js';
export type { Requirements, SignerIdentity, VerifiedArtifact } from './sigstore/verify.js';
export {
  compileTrustRoot,
  type TrustRootOptions,
  type TrustRootResolver,
  trustRootResolver,
} from './trust/compile.js';
export { TrustRootError, type TrustRootErrorCode } from './trust/errors.js';
export { publicGoodTrustRoot } from './trust/public-good.js';
export { type CompiledTrustRoot, PUBLIC_GOOD, trustRootFromJSON } from './trust/trusted-root.js';
export { sigstoreTufClient, type TufClient, type TufRequest } from './trust/tuf.js';
