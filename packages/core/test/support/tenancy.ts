// Builders for ClusterImagePolicies, ImagePolicies and exceptions, and a stand-in verifier that
// answers each policy from a table, for the tests of how they combine.
import {
  type AdmissionRequest,
  type ClusterImagePolicy,
  type ImagePolicy,
  type ImagePolicyException,
  parseClusterImagePolicy,
  parseImagePolicy,
  parseImagePolicyException,
} from '@signet/k8s-types';
import { decideAdmission } from '../../src/decide.js';
import { type MatchSubject, matchSubjectOf, type PolicySet } from '../../src/match.js';
import { checkedVerdict, planChecks } from '../../src/plan.js';
import { type AdmissionOutcome, summarizeAdmission } from '../../src/response.js';
import { type ImageVerdict, policyVerdict } from '../../src/verdict.js';
import { objectOf, requestFor } from './workloads.js';

export const DAY = 24 * 60 * 60 * 1000;
/** The tests' "now": 2026-05-01T12:00:00Z. */
export const NOW = Date.parse('2026-05-01T12:00:00Z');
export const DIGEST = `sha256:${'d'.repeat(64)}`;

const AUTHORITY = [{ name: 'key', key: { data: '-----BEGIN PUBLIC KEY-----\n...' } }];

export function cip(
  name: string,
  globs: readonly string[],
  spec: Record<string, unknown> = {},
): ClusterImagePolicy {
  return parseClusterImagePolicy({
    apiVersion: 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata: { name },
    spec: { images: globs.map((glob) => ({ glob })), authorities: AUTHORITY, ...spec },
  });
}

export function imagePolicy(
  namespace: string,
  name: string,
  globs: readonly string[],
  spec: Record<string, unknown> = {},
  metadata: Record<string, unknown> = {},
): ImagePolicy {
  return parseImagePolicy({
    apiVersion: 'policy.signet.dev/v1alpha1',
    kind: 'ImagePolicy',
    metadata: { name, namespace, ...metadata },
    spec: { images: globs.map((glob) => ({ glob })), authorities: AUTHORITY, ...spec },
  });
}

export interface ExceptionOptions {
  readonly images?: readonly ({ glob: string } | { digest: string })[];
  readonly policies: readonly { kind: 'ClusterImagePolicy' | 'ImagePolicy'; name: string }[];
  /** Milliseconds since the epoch. */
  readonly expires: number;
  /** Milliseconds since the epoch; absent: no creationTimestamp (a file's object). */
  readonly created?: number;
}

export function exception(namespace: string, name: string, options: ExceptionOptions): ImagePolicyException {
  const iso = (ms: number) => new Date(ms).toISOString();
  return parseImagePolicyException({
    apiVersion: 'policy.signet.dev/v1alpha1',
    kind: 'ImagePolicyException',
    metadata: {
      name,
      namespace,
      ...(options.created === undefined ? {} : { creationTimestamp: iso(options.created) }),
    },
    spec: {
      images: options.images ?? [{ glob: '**' }],
      policies: options.policies,
      reason: `reason of ${name}`,
      expires: iso(options.expires),
    },
  });
}

/** A Pod of `namespace` running `images`. */
export function podCreate(namespace: string, images: readonly string[]): AdmissionRequest {
  const pod = objectOf('Pod', {
    spec: { containers: images.map((image, i) => ({ name: `c${i}`, image })) },
  });
  return { ...requestFor('Pod', 'CREATE', pod), namespace };
}

/** Which policies pass for which image: `passes(policy, image)`. */
export type Oracle = (policy: string, image: string) => boolean;

export interface Judged {
  readonly outcome: AdmissionOutcome;
  /** `image: policy` of every policy the stand-in verifier was asked about. */
  readonly verified: readonly string[];
  readonly verdicts: readonly ImageVerdict[];
}

/** Decides, plans, "verifies" by the oracle and summarizes, as the admission service does. */
export function judge(
  set: PolicySet,
  request: AdmissionRequest,
  passes: Oracle,
  /** `null`: no time given, so no exception may apply. */
  now: number | null = NOW,
  subject: MatchSubject = matchSubjectOf(request),
): Judged {
  const decision = decideAdmission(request);
  const verified: string[] = [];
  const verdicts = planChecks(decision, set, subject, now === null ? {} : { now }).map((check) => {
    if (check.kind === 'settled') return check.verdict;
    const results = check.policies.map((policy) => {
      verified.push(`${check.target.image}: ${policy.name}`);
      return policyVerdict(policy, [
        passes(policy.name, check.target.image)
          ? { authority: 'key', passed: true }
          : { authority: 'key', passed: false, failure: { kind: 'policy', reason: 'no valid signature' } },
      ]);
    });
    return checkedVerdict(check, results);
  });
  return { outcome: summarizeAdmission(decision, verdicts), verified, verdicts };
}
