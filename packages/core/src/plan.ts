// What the verifier has to do for a decision: for each image, the parsed reference and the
// policies it must pass. Images that cannot be verified at all (invalid reference, no matching
// policy) are settled here, so the verifier only ever sees real work.
import type { AdmissionDecision, ImageTarget } from './decide.js';
import { InvalidReferenceError } from './errors.js';
import { type CompiledPolicy, type MatchSubject, matchPolicies, type PolicySet } from './match.js';
import { type ImageReference, parseReference } from './reference.js';
import type { ImageVerdict } from './verdict.js';

export type ImageCheck<P extends CompiledPolicy = CompiledPolicy> =
  /** Verify `reference` against every policy (all must pass); report one `PolicyVerdict` each. */
  | {
      readonly kind: 'verify';
      readonly target: ImageTarget;
      readonly reference: ImageReference;
      readonly policies: readonly P[];
    }
  /** Nothing to verify; pass the verdict on as it is. */
  | { readonly kind: 'settled'; readonly verdict: ImageVerdict };

export interface PlanOptions {
  /**
   * Let Pods run tags under every policy (`signet serve --allow-unpinned-tags`): they are
   * verified by the digest the tag points at now, with a warning. Default false.
   */
  readonly allowUnpinnedTags?: boolean;
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
  return decision.images.map((target) => checkFor(target, set, subject, pinning));
}

function checkFor<P extends CompiledPolicy>(
  target: ImageTarget,
  set: PolicySet<P>,
  subject: MatchSubject,
  pinning: boolean,
): ImageCheck<P> {
  const { path, image } = target;
  let reference: ImageReference;
  try {
    reference = parseReference(image);
  } catch (error) {
    if (!(error instanceof InvalidReferenceError)) throw error;
    return { kind: 'settled', verdict: { path, image, outcome: { kind: 'invalid-reference', error } } };
  }
  const match = matchPolicies(set, reference, subject);
  if (match.kind === 'no-match') return { kind: 'settled', verdict: { path, image, outcome: match } };
  if (pinning && reference.digest === undefined) {
    // What is admitted is what the kubelet pulls: a tag could name another image by then.
    const strict = match.policies.filter((p) => p.mode === 'enforce' && !p.allowsUnpinnedTags);
    if (strict.length > 0) {
      const policies = strict.map((p) => p.name);
      return { kind: 'settled', verdict: { path, image, outcome: { kind: 'unpinned', policies } } };
    }
  }
  return { kind: 'verify', target, reference, policies: match.policies };
}
