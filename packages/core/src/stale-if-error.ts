// Stale-if-error: when the registry cannot be asked (down, rate-limited, too slow), an image that
// passed the same policy, compiled from the same objects and trust material, a short while ago may
// be admitted on the record of that pass, so that a drain or a restart during an outage does not
// wedge the workloads that already run. When it may is decided here, without any I/O; the caller
// finds the record (and checks that Signet wrote it) and says what the policy is now.
import type { ImageReference } from './reference.js';
import type { ImageVerdict, PolicyVerdict, VerificationFailure } from './verdict.js';

/** A record of a pass, as its reader found it (and authenticated it: only Signet writes them). */
export interface PassRecord {
  /** `registry/repository` of the verified image, as `ImageReference` spells them. */
  readonly repository: string;
  /** The verified digest, `sha256:...`. */
  readonly digest: string;
  /** The ClusterImagePolicy it passed. */
  readonly policy: string;
  /** The fingerprint of that policy as compiled then (spec, keys, trust roots, Signet's version). */
  readonly fingerprint: string;
  /** When it was verified, epoch milliseconds (the writer's clock). */
  readonly verifiedAt: number;
}

/** Why a record does not admit. */
export type GraceRefusal =
  /** The policy passed: nothing to grace. */
  | 'passed'
  /** A policy failure (no valid signature, identity mismatch, ...): never graced. */
  | 'policy-failure'
  /** The grace period is 0 (or not a usable number): stale-if-error is off. */
  | 'off'
  /** The image is named by a tag: what the kubelet pulls may not be what was verified. */
  | 'tag'
  | 'no-record'
  /** The record is of another repository or digest. */
  | 'other-image'
  | 'other-policy'
  /** The policy, its keys or trust roots (or Signet) changed since: a new fingerprint. */
  | 'other-fingerprint'
  /** Older than the grace period. */
  | 'expired'
  /** Verified later than now by more than the clock skew allowed. */
  | 'future';

export type GraceDecision =
  | { readonly admit: true; readonly ageMs: number }
  | { readonly admit: false; readonly refusal: GraceRefusal };

export interface GraceQuestion {
  /** The image as the request names it. */
  readonly reference: ImageReference;
  /** What verifying it against the policy said now. */
  readonly verdict: PolicyVerdict;
  /** The policy's fingerprint now. */
  readonly fingerprint: string;
  /** The record found for this image and policy, if any. */
  readonly record: PassRecord | undefined;
  /** How old a record may be to admit; 0 turns stale-if-error off. */
  readonly graceMs: number;
  /** Epoch milliseconds, this replica's clock. */
  readonly now: number;
}

/** How far in the future a record's time may be (another replica's clock running ahead). */
export const CLOCK_SKEW_MS = 60_000;

/**
 * Whether `record` admits the image in place of a verification that failed. Only for an
 * infrastructure failure, an image named by digest, a record of that very repository, digest and
 * policy with the policy's fingerprint now, younger than the grace period. Everything else refuses.
 */
export function graceFor(question: GraceQuestion): GraceDecision {
  const { reference, verdict, record, graceMs, now } = question;
  const refuse = (refusal: GraceRefusal): GraceDecision => ({ admit: false, refusal });
  if (verdict.passed) return refuse('passed');
  if (verdict.failure.kind !== 'infrastructure') return refuse('policy-failure');
  if (!(Number.isFinite(graceMs) && graceMs > 0)) return refuse('off');
  if (reference.digest === undefined) return refuse('tag');
  if (record === undefined) return refuse('no-record');
  if (record.digest !== reference.digest || record.repository !== repositoryOf(reference))
    return refuse('other-image');
  if (record.policy !== verdict.policy) return refuse('other-policy');
  if (record.fingerprint !== question.fingerprint || question.fingerprint === '')
    return refuse('other-fingerprint');
  if (!Number.isFinite(record.verifiedAt)) return refuse('expired');
  const ageMs = now - record.verifiedAt;
  if (ageMs < -CLOCK_SKEW_MS) return refuse('future');
  if (ageMs > graceMs) return refuse('expired');
  return { admit: true, ageMs: Math.max(0, ageMs) };
}

/** `registry/repository`, the way records name an image's repository. */
export function repositoryOf(reference: ImageReference): string {
  return `${reference.registry}/${reference.repository}`;
}

/** What the caller knows about each policy of an image, by policy name. */
export interface GraceContext {
  readonly reference: ImageReference | undefined;
  readonly now: number;
  /** The policy's fingerprint now and its grace period; `undefined` for a policy it does not know. */
  policy(name: string): { readonly fingerprint: string; readonly graceMs: number } | undefined;
  /** The authenticated record of a pass of this image and policy, if any. */
  record(policy: string): PassRecord | undefined;
  /** Told why no record stood in for an infrastructure failure (for metrics). */
  refused?(policy: string, refusal: GraceRefusal): void;
}

/** A verdict admitted on a record, and why verification failed now. */
export interface GracedPolicy {
  readonly policy: string;
  readonly ageMs: number;
  readonly failure: VerificationFailure;
}

/**
 * The image's verdict with each failing policy the grace decision admits turned into a pass that
 * says so (`grace`), and the list of those. Every other verdict is left exactly as it was.
 */
export function applyGrace(
  verdict: ImageVerdict,
  context: GraceContext,
): { readonly verdict: ImageVerdict; readonly graced: readonly GracedPolicy[] } {
  const { outcome } = verdict;
  const reference = context.reference;
  if (outcome.kind !== 'policies' || reference === undefined) return { verdict, graced: [] };
  const graced: GracedPolicy[] = [];
  const verdicts = outcome.verdicts.map((policy): PolicyVerdict => {
    if (policy.passed) return policy;
    const known = context.policy(policy.policy);
    if (known === undefined) return policy;
    const decision = graceFor({
      reference,
      verdict: policy,
      fingerprint: known.fingerprint,
      record: context.record(policy.policy),
      graceMs: known.graceMs,
      now: context.now,
    });
    if (!decision.admit) {
      if (policy.failure.kind === 'infrastructure') context.refused?.(policy.policy, decision.refusal);
      return policy;
    }
    graced.push({ policy: policy.policy, ageMs: decision.ageMs, failure: policy.failure });
    return {
      policy: policy.policy,
      mode: policy.mode,
      passed: true,
      grace: { ageMs: decision.ageMs, failure: policy.failure },
    };
  });
  if (graced.length === 0) return { verdict, graced };
  return { verdict: { ...verdict, outcome: { kind: 'policies', verdicts } }, graced };
}

/** `45s`, `12m`, `3h12m`, `2d4h`: a record's age as a warning says it. */
export function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h${minutes % 60 > 0 ? `${minutes % 60}m` : ''}`;
  const days = Math.floor(hours / 24);
  return `${days}d${hours % 24 > 0 ? `${hours % 24}h` : ''}`;
}
