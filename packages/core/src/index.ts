/**
 * @signet/core: rollout-safe admission decisions and sigstore policy matching. Pure code: no
 * network, no file system, no clock. The surface is pinned by `test/index.test.ts`.
 */
export {
  type AdmissionDecision,
  type AdmitDecision,
  type AdmitRule,
  type DecideOptions,
  type DenyDecision,
  type DenyRule,
  decideAdmission,
  type ImageTarget,
  type VerifyDecision,
  type VerifyRule,
} from './decide.js';
export { type CauseInMessage, describeCause } from './describe.js';
export { semanticEqual } from './equality.js';
export {
  CoreError,
  type CoreErrorCode,
  type InvalidPolicyCode,
  InvalidPolicyError,
  InvalidReferenceError,
} from './errors.js';
export {
  type CompiledPolicy,
  compilePolicies,
  compilePolicy,
  type MatchSubject,
  matchPolicies,
  matchSubjectOf,
  type PolicyMatch,
  type PolicySet,
  policySet,
} from './match.js';
export { digestPatch, type JsonPatchOperation } from './patch.js';
export { type ImageCheck, type PlanOptions, planChecks } from './plan.js';
export { DOCKER_HUB, type ImageReference, parseReference, withDigest } from './reference.js';
export {
  type AdmissionOutcome,
  type ImageFailure,
  mutatingResponse,
  summarizeAdmission,
  validatingResponse,
} from './response.js';
export type { Labels } from './selector.js';
export {
  applyGrace,
  CLOCK_SKEW_MS,
  formatAge,
  type GraceContext,
  type GraceDecision,
  type GracedPolicy,
  type GraceQuestion,
  type GraceRefusal,
  graceFor,
  type PassRecord,
  repositoryOf,
} from './stale-if-error.js';
export {
  type AuthorityResult,
  type FailureKind,
  type ImageOutcome,
  type ImageVerdict,
  type PolicyVerdict,
  policyVerdict,
  type VerificationFailure,
} from './verdict.js';
