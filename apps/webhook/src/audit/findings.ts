// What an audit says about one object: per image and policy a result (pass, fail, warn,
// infrastructure) with its reason, read from the webhook's own answer to a CREATE of the object.
import { describeCause, formatAge, type ImageVerdict } from '@signet/core';
import type { CreateJudgement } from '../admission/judge-create.js';
import type { VerifiedImage } from '../http/review.js';

/**
 * `fail`: the image does not satisfy an enforced policy (it would be denied); `warn`: it fails a
 * policy in warn mode (admitted with a warning); `infrastructure`: it could not be checked (registry
 * down, timeout), which says nothing about compliance; `pass`: it satisfies every policy.
 */
export type AuditResult = 'pass' | 'fail' | 'warn' | 'infrastructure';

const SEVERITY: Readonly<Record<AuditResult, number>> = { pass: 0, warn: 1, infrastructure: 2, fail: 3 };

/** The most severe of `results` (`pass` for none). */
export function worstOf(results: Iterable<AuditResult>): AuditResult {
  let worst: AuditResult = 'pass';
  for (const result of results) if (SEVERITY[result] > SEVERITY[worst]) worst = result;
  return worst;
}

export interface AuditFinding {
  /** The image field: `spec.containers[0].image`. */
  readonly path: string;
  /** The image judged: the pulled digest for running Pods, else the spec's (pinned) image. */
  readonly image: string;
  /** The image as the spec names it, when it differs from `image` (a tag that has moved). */
  readonly specImage?: string;
  readonly digest?: string;
  /**
   * The ClusterImagePolicy (or `namespace/name` of an ImagePolicy), or `''` when none applies
   * (no-match policy, unreadable object).
   */
  readonly policy: string;
  readonly result: AuditResult;
  readonly reason: string;
}

/** Findings of one judged object. `specImages` maps pinned-from-status paths to the spec's images. */
export function findingsOf(
  judgement: CreateJudgement,
  specImages: Readonly<Record<string, string>> = {},
): AuditFinding[] {
  const { validated, pinned } = judgement;
  const verifications = new Map<string, VerifiedImage>(
    (validated.verifications ?? []).map((v) => [v.verdict.path, v]),
  );
  const findings: AuditFinding[] = [];
  for (const verdict of validated.verdicts ?? []) {
    const verification = verifications.get(verdict.path);
    const base = {
      path: verdict.path,
      image: verdict.image,
      ...(specImages[verdict.path] === undefined ? {} : { specImage: specImages[verdict.path] }),
      ...digestOf(verdict.image, verification),
    };
    for (const finding of verdictFindings(verdict, pinned[verdict.path] !== undefined))
      findings.push({ ...base, ...finding });
    for (const finding of noteFindings(verdict)) findings.push({ ...base, ...finding });
  }
  const message = validated.response.status?.message;
  const denied = !validated.response.allowed;
  if (denied && !findings.some((f) => f.result === 'fail' || f.result === 'infrastructure')) {
    // Denied without an image to blame (an object Signet cannot read).
    const result = validated.rule === 'infrastructure' ? 'infrastructure' : 'fail';
    findings.push({ path: '', image: '', policy: '', result, reason: message ?? validated.rule });
  }
  return findings;
}

type Judged = Pick<AuditFinding, 'policy' | 'result' | 'reason'>;

/** What the plan noted beside the policies: exceptions used, and no ClusterImagePolicy matching. */
function noteFindings(verdict: ImageVerdict): Judged[] {
  const findings: Judged[] = (verdict.exemptions ?? []).map((e) => ({
    policy: e.policy,
    result: 'warn',
    reason: `exempted by ImagePolicyException ${e.exception} until ${e.expires}: ${e.reason}`,
  }));
  if (verdict.noClusterPolicy === 'warn')
    findings.push({
      policy: '',
      result: 'warn',
      reason: 'no ClusterImagePolicy matches (no-match-policy: warn)',
    });
  return findings;
}

function verdictFindings(verdict: ImageVerdict, wasPinned: boolean): Judged[] {
  const outcome = verdict.outcome;
  switch (outcome.kind) {
    case 'policies':
      return outcome.verdicts.map((v) => {
        // Admitted on a verification record: not verified now, which says nothing about compliance.
        if (v.passed && v.grace !== undefined) {
          const reason = `${v.grace.failure.reason} (admitted on a verification record ${formatAge(v.grace.ageMs)} old: stale-if-error)`;
          return { policy: v.policy, result: 'infrastructure', reason };
        }
        if (v.passed)
          return {
            policy: v.policy,
            result: 'pass',
            reason: v.authority ? `authority "${v.authority}" verified` : 'passed',
          };
        const reason = `${v.failure.reason}${v.failure.cause === undefined ? '' : ` (${describeCause(v.failure.cause)})`}`;
        if (v.failure.kind === 'infrastructure')
          return { policy: v.policy, result: 'infrastructure', reason };
        return { policy: v.policy, result: v.mode === 'warn' ? 'warn' : 'fail', reason };
      });
    case 'no-match': {
      const result = outcome.action === 'allow' ? 'pass' : outcome.action === 'warn' ? 'warn' : 'fail';
      return [{ policy: '', result, reason: `no policy matches (no-match-policy: ${outcome.action})` }];
    }
    case 'invalid-reference':
      return [{ policy: '', result: 'fail', reason: outcome.error.message }];
    case 'exempted':
      // Every policy was exempted: the exemptions are the findings.
      return [];
    case 'unpinned':
      // The mutating endpoint could not resolve the tag (registry down, tag gone): unknown, not
      // non-compliant. A tag it did pin is never judged unpinned.
      return outcome.policies.map((policy) =>
        wasPinned
          ? { policy, result: 'fail', reason: 'the Pod runs a tag, not the verified digest' }
          : { policy, result: 'infrastructure', reason: 'the tag could not be resolved to a digest' },
      );
  }
}

function digestOf(image: string, verification: VerifiedImage | undefined): { digest?: string } {
  const digest = verification?.digest ?? /@(sha256:[0-9a-f]{64})$/.exec(image)?.[1];
  return digest === undefined ? {} : { digest };
}
