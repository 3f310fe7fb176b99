// What the verifier has to do for a decision: for each image, the parsed reference and the
// policies it must pass. Images that cannot be verified at all (invalid reference, no matching
// policy, every policy exempted) are settled here, so the verifier only ever sees real work.
import type { AdmissionDecision, ImageTarget } from './decide.js';
import { InvalidReferenceError } from './errors.js';
import { type CompiledPolicy, type MatchSubject, matchPolicies, type PolicySet } from './match.js';
import { type ImageReference, parseReference } from './reference.js';
import {
  type ImageOutcome,
  type ImageVerdict,
  inMode,
  type PolicyResult,
  type PolicyVerdict,
} from './verdict.js';

/** Verify `reference` against every policy (all must pass); report one `PolicyVerdict` each. */
export interface VerifyCheck<P extends CompiledPolicy = CompiledPolicy> {
  readonly kind: 'verify';
  readonly target: ImageTarget;
  readonly reference: ImageReference;
  readonly policies: readonly P[];
  /** What the plan knows beside the policies, carried into the verdict by {@link checkedVerdict}. */
  readonly notes: VerdictNotes;
}

/** Exceptions used for the image, and whether no ClusterImagePolicy matched it. */
export type VerdictNotes = Pick<ImageVerdict, 'exemptions' | 'noClusterPolicy'>;

export type ImageCheck<P extends CompiledPolicy = CompiledPolicy> =
  | VerifyCheck<P>
  /** Nothing to verify; pass the verdict on as it is. */
  | { readonly kind: 'settled'; readonly verdict: ImageVerdict };

export interface PlanOptions {
  /**
   * Let Pods run tags under every policy (`signet serve --allow-unpinned-tags`): they are
   * verified by the digest the tag points at now, with a warning. Default false.
   */
  readonly allowUnpinnedTags?: boolean;
  /** Now, in milliseconds since the epoch: which exceptions are valid. Without it, none applies. */
  readonly now?: number;
}

/** One check per image of a `verify` decision, in the decision's order; none otherwise. */
export function planChecks<P extends CompiledPolicy>(
  decision: AdmissionDecision,
  set: PolicySet<P>,
  subject: MatchSubject,
  options: PlanOptions = {},
): ImageCheck<P>[] {
  if (decision.action !== 'verify') return [];
  const pinning = decision.startsContainers && options.allowUnpinnedTags !== true;
  return decision.images.map((target) => checkFor(target, set, subject, pinning, options.now));
}

/**
 * The verdict of a `verify` check: the verifier's results, one per policy of the check in its
 * order, each joined with that policy's record (its mode), with what the plan noted. A policy
 * the results do not answer (missing, or about another policy) fails as infrastructure: never
 * admitted for want of an answer.
 */
export function checkedVerdict(check: VerifyCheck, results: readonly PolicyResult[]): ImageVerdict {
  const verdicts = check.policies.map((policy, index) => {
    const result = results[index];
    return result !== undefined && result.policy === policy.name
      ? inMode(result, policy.mode)
      : unanswered(policy);
  });
  const outcome: ImageOutcome = { kind: 'policies', verdicts };
  return { path: check.target.path, image: check.target.image, outcome, ...check.notes };
}

function unanswered(policy: CompiledPolicy): PolicyVerdict {
  const failure = { kind: 'infrastructure' as const, reason: 'the verifier gave no result for the policy' };
  return { policy: policy.name, mode: policy.mode, passed: false, failure };
}

function checkFor<P extends CompiledPolicy>(
  target: ImageTarget,
  set: PolicySet<P>,
  subject: MatchSubject,
  pinning: boolean,
  now: number | undefined,
): ImageCheck<P> {
  const { path, image } = target;
  let reference: ImageReference;
  try {
    reference = parseReference(image);
  } catch (error) {
    if (!(error instanceof InvalidReferenceError)) throw error;
    return { kind: 'settled', verdict: { path, image, outcome: { kind: 'invalid-reference', error } } };
  }
  const match = matchPolicies(set, reference, subject, now);
  if (match.kind === 'no-match') return { kind: 'settled', verdict: { path, image, outcome: match } };
  const notes: VerdictNotes = {
    ...(match.exemptions.length > 0 ? { exemptions: match.exemptions } : {}),
    ...(match.noClusterPolicy === undefined ? {} : { noClusterPolicy: match.noClusterPolicy }),
  };
  if (match.kind === 'exempted') {
    return { kind: 'settled', verdict: { path, image, outcome: { kind: 'exempted' }, ...notes } };
  }
  if (pinning && reference.digest === undefined) {
    // What is admitted is what the kubelet pulls: a tag could name another image by then.
    const strict = match.policies.filter((p) => p.mode === 'enforce' && !p.allowsUnpinnedTags);
    if (strict.length > 0) {
      const policies = strict.map((p) => p.name);
      return { kind: 'settled', verdict: { path, image, outcome: { kind: 'unpinned', policies }, ...notes } };
    }
  }
  return { kind: 'verify', target, reference, policies: match.policies, notes };
}
