// What the verifier reports back to core, per image. Core turns these into AdmissionResponses
// (see response.ts); the verifier never formats messages itself.
import type { NoMatchPolicy, PolicyMode } from '@signet/k8s-types';
import type { InvalidReferenceError } from './errors.js';
import type { Exemption } from './exceptions.js';

/**
 * `policy`: the image does not satisfy the policy (no valid signature, identity mismatch,
 * attestation policy false). `infrastructure`: it could not be checked (registry unreachable,
 * timeout, malformed data). Both deny in `enforce` mode; messages and metrics say which.
 */
export type FailureKind = 'policy' | 'infrastructure';

/** Why one check failed. */
export interface VerificationFailure {
  readonly kind: FailureKind;
  /** Short and specific: `no valid signature: 2 found, 0 verified`. */
  readonly reason: string;
  /** What caused it; an `Error` chain is printed message by message, `cause` by `cause`. */
  readonly cause?: unknown;
}

/** One authority of a policy, as the verifier checked it. */
export type AuthorityResult =
  | { readonly authority: string; readonly passed: true }
  | { readonly authority: string; readonly passed: false; readonly failure: VerificationFailure };

/**
 * What the verifier says about one policy for one image: the policy's name and whether it passed.
 * Its mode is not the verifier's business: {@link checkedVerdict} joins it from core's record.
 */
export type PolicyResult =
  | { readonly policy: string; readonly passed: true; readonly authority?: string }
  | { readonly policy: string; readonly passed: false; readonly failure: VerificationFailure };

/** What one ClusterImagePolicy or ImagePolicy said about one image, in its mode. */
export type PolicyVerdict =
  | {
      readonly policy: string;
      readonly mode: PolicyMode;
      readonly passed: true;
      /** The authority that passed; absent for a policy without authorities. */
      readonly authority?: string;
      /**
       * Set when verification failed now for an infrastructure reason and a record of an earlier
       * pass admitted the image instead (stale-if-error, `applyGrace`): the record's age and the
       * failure it stood in for. Admitted with a warning saying so.
       */
      readonly grace?: { readonly ageMs: number; readonly failure: VerificationFailure };
    }
  | {
      readonly policy: string;
      readonly mode: PolicyMode;
      readonly passed: false;
      readonly failure: VerificationFailure;
    };

/** Everything known about one image after verification. */
export type ImageOutcome =
  /** One verdict per matching policy; the image passes when every `enforce` verdict passed. */
  | { readonly kind: 'policies'; readonly verdicts: readonly PolicyVerdict[] }
  /** No policy matched; the configured `no-match-policy` applies. */
  | { readonly kind: 'no-match'; readonly action: NoMatchPolicy }
  /** Policies applied and exceptions removed all of them (see `ImageVerdict.exemptions`). */
  | { readonly kind: 'exempted' }
  /** The reference does not parse, so nothing could be matched or verified. */
  | { readonly kind: 'invalid-reference'; readonly error: InvalidReferenceError }
  /**
   * A Pod would run a tag where these `enforce` policies require the digest that was verified:
   * denied before any registry call.
   */
  | { readonly kind: 'unpinned'; readonly policies: readonly string[] };

export interface ImageVerdict {
  /** The field path of the image (`ImageTarget.path`). */
  readonly path: string;
  /** The image as written, to detect a verdict about a different value. */
  readonly image: string;
  readonly outcome: ImageOutcome;
  /** Policies that applied and that valid exceptions removed: admitted with a warning naming each. */
  readonly exemptions?: readonly Exemption[];
  /**
   * No ClusterImagePolicy matched, and the no-match policy (`warn` or `allow`) applied beside the
   * namespace's ImagePolicies: `warn` adds its warning.
   */
  readonly noClusterPolicy?: 'warn' | 'allow';
}

/**
 * Combines a policy's authorities: any one passing passes the policy (OR), as in
 * policy-controller, which also passes a policy that has no authorities (only possible with
 * `fail-on-empty-authorities: false`). When all fail, the failure is `infrastructure` if any
 * authority could not be checked (a retry might pass), else `policy`; with several authorities the
 * cause is an `AggregateError` holding each authority's failure with its own cause.
 */
export function combineAuthorities(policy: string, results: readonly AuthorityResult[]): PolicyResult {
  const failures: VerificationFailure[] = [];
  const errors: Error[] = [];
  for (const result of results) {
    if (result.passed) return { policy, passed: true, authority: result.authority };
    failures.push(result.failure);
    errors.push(
      new Error(`authority "${result.authority}": ${result.failure.reason}`, { cause: result.failure.cause }),
    );
  }
  const [only] = failures;
  if (only === undefined) return { policy, passed: true };
  if (failures.length === 1) return { policy, passed: false, failure: only };
  const kind = failures.some((failure) => failure.kind === 'infrastructure') ? 'infrastructure' : 'policy';
  const reason = `none of ${failures.length} authorities passed`;
  return { policy, passed: false, failure: { kind, reason, cause: new AggregateError(errors, '') } };
}

/** A policy's verdict in its mode: its authorities combined ({@link combineAuthorities}). */
export function policyVerdict(
  policy: { readonly name: string; readonly mode: PolicyMode },
  results: readonly AuthorityResult[],
): PolicyVerdict {
  return inMode(combineAuthorities(policy.name, results), policy.mode);
}

/** A verifier's result in the mode of the policy it is about (only the fields a verdict has). */
export function inMode(result: PolicyResult, mode: PolicyMode): PolicyVerdict {
  if (!result.passed) return { policy: result.policy, mode, passed: false, failure: result.failure };
  const authority = result.authority === undefined ? {} : { authority: result.authority };
  return { policy: result.policy, mode, passed: true, ...authority };
}
