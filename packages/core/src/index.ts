/**
 * @signet/core: rollout-safe admission decisions, sigstore policy matching, and how cluster
 * policies, namespace policies and exceptions combine. Pure code: no network, no file system, no
 * clock (the time is passed in). The surface is pinned by `test/index.test.ts`.
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
  type PolicyObjectKind,
} from './errors.js';
export {
  type CompiledException,
  compileException,
  DEFAULT_MAX_EXCEPTION_LIFETIME_MS,
  type ExceptionState,
  type Exemption,
  exceptionState,
} from './exceptions.js';
export {
  type CompiledPolicy,
  compilePolicies,
  compilePolicy,
  type MatchSubject,
  matchPolicies,
  matchSubjectOf,
  type PolicyMatch,
  type PolicySet,
  type PolicySetConfig,
  policySet,
} from './match.js';
export { digestPatch, type JsonPatchOperation } from './patch.js';
export {
  checkedVerdict,
  type ImageCheck,
  type PlanOptions,
  planChecks,
  type VerdictNotes,
  type VerifyCheck,
} from './plan.js';
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
  combineAuthorities,
  type FailureKind,
  type ImageOutcome,
  type ImageVerdict,
  type PolicyResult,
  type PolicyVerdict,
  policyVerdict,
  type VerificationFailure,
} from './verdict.js';
