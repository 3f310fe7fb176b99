// AdmissionResponses for the validating and the mutating endpoint, from a decision and, for the
// validating one, the verifier's verdicts. Deny and warning lines follow the contract's format:
// `<field path> <image>: policy "<name>" (<mode>): <reason> (<cause chain>)`.
import type { AdmissionAnswer, NoMatchPolicy, PolicyMode } from '@signet/k8s-types';
import type { AdmissionDecision, ImageTarget } from './decide.js';
import { describeCause, oneLine } from './describe.js';
import { quote } from './errors.js';
import type { Exemption } from './exceptions.js';
import { digestPatch } from './patch.js';
import { formatAge } from './stale-if-error.js';
import type {
  FailureKind,
  ImageOutcome,
  ImageVerdict,
  PolicyVerdict,
  VerificationFailure,
} from './verdict.js';

/** One image that did not pass, for metrics and logs. */
export interface ImageFailure {
  readonly path: string;
  readonly image: string;
  /** The failing policy; `undefined` for no-match, invalid references and missing verdicts. */
  readonly policy: string | undefined;
  readonly mode: PolicyMode | undefined;
  readonly kind: FailureKind;
  /** True when this failure denies the request (enforce mode, no-match deny, ...). */
  readonly denied: boolean;
}

/** The validating answer before it is wrapped into an AdmissionResponse. */
export interface AdmissionOutcome {
  readonly allowed: boolean;
  /** One line per denied image. */
  readonly denials: readonly string[];
  /**
   * One admission warning per image that fails only in warn mode, or that an exception let in
   * (or per row-5 admission).
   */
  readonly warnings: readonly string[];
  readonly failures: readonly ImageFailure[];
}

/**
 * Applies the verdicts to the decision. Every image of a `verify` decision needs exactly one
 * verdict with the same path and image; one without (or with two) is denied as an infrastructure
 * failure (fail closed), as is a `policies` verdict that holds no policy verdict at all.
 */
export function summarizeAdmission(
  decision: AdmissionDecision,
  verdicts: readonly ImageVerdict[],
): AdmissionOutcome {
  if (decision.action === 'admit') {
    return {
      allowed: true,
      denials: [],
      warnings: decision.warning === undefined ? [] : [decision.warning],
      failures: [],
    };
  }
  if (decision.action === 'deny')
    return { allowed: false, denials: [decision.reason], warnings: [], failures: [] };
  // Two verdicts for one field contradict each other or repeat each other: trust neither.
  const byPath = new Map<string, ImageVerdict | null>();
  for (const verdict of verdicts) byPath.set(verdict.path, byPath.has(verdict.path) ? null : verdict);
  const denials: string[] = [];
  const warnings: string[] = [];
  const failures: ImageFailure[] = [];
  for (const target of decision.images) {
    const verdict = byPath.get(target.path);
    const found = verdict != null && verdict.image === target.image ? verdict : undefined;
    const image = judgeImage(target, found, decision.startsContainers);
    if (image.denied.length > 0) denials.push(imageLine(target, image.denied));
    if (image.warned.length > 0) warnings.push(imageLine(target, image.warned));
    failures.push(...image.failures);
  }
  return { allowed: denials.length === 0, denials, warnings, failures };
}

/**
 * The validating endpoint's answer: 403 with one line per denied image, or allowed. The HTTP
 * layer adds the request's uid when it wraps the answer into an AdmissionReview.
 */
export function validatingResponse(outcome: AdmissionOutcome): AdmissionAnswer {
  const warnings = outcome.warnings.length > 0 ? { warnings: outcome.warnings } : {};
  if (outcome.allowed) return { allowed: true, ...warnings };
  const status = { status: 'Failure', code: 403, reason: 'Forbidden', message: outcome.denials.join('\n') };
  return { allowed: false, status, ...warnings };
}

/**
 * The mutating endpoint's response: always allowed (the validating endpoint denies), with a
 * base64 JSON patch pinning the planned fields whose digests are in `digests` (path -> digest).
 */
export function mutatingResponse(
  decision: AdmissionDecision,
  digests: ReadonlyMap<string, string>,
): AdmissionAnswer {
  const operations = digestPatch(decision, digests);
  if (operations.length === 0) return { allowed: true };
  const patch = Buffer.from(JSON.stringify(operations)).toString('base64');
  return { allowed: true, patchType: 'JSONPatch', patch };
}

interface ImageJudgement {
  readonly denied: string[];
  readonly warned: string[];
  readonly failures: ImageFailure[];
}

/** The warning for a tag a Pod runs under a policy that allows tags (or in warn mode). */
const UNPINNED_WARNING =
  'the tag is not pinned to a digest: admitted as the image it points at now, and the kubelet may pull another image if the tag moves (pin it: image@sha256:...)';

function unpinnedText(policies: readonly string[]): string {
  const names = policies.map((p) => `policy ${quote(p)} (enforce)`).join(', ');
  return (
    `${names}: the tag is not pinned to a digest, so the image the kubelet pulls may not be the one verified; ` +
    "use a digest (image@sha256:...) or let Signet's mutating webhook pin the tag"
  );
}

function judgeImage(
  target: ImageTarget,
  verdict: ImageVerdict | undefined,
  startsContainers: boolean,
): ImageJudgement {
  const judgement: ImageJudgement = { denied: [], warned: [], failures: [] };
  const record: RecordFailure = (text, kind, denied, policy) => {
    (denied ? judgement.denied : judgement.warned).push(text);
    const { path, image } = target;
    judgement.failures.push({ path, image, policy: policy?.policy, mode: policy?.mode, kind, denied });
  };
  judgeOutcome(target, verdict?.outcome, startsContainers, judgement, record);
  // No ClusterImagePolicy matched, and ImagePolicies were checked beside the no-match policy.
  if (verdict?.noClusterPolicy === 'warn') record(noMatchText('warn'), 'policy', false);
  for (const exemption of verdict?.exemptions ?? []) judgement.warned.push(exemptionText(exemption));
  return judgement;
}

type RecordFailure = (text: string, kind: FailureKind, denied: boolean, policy?: PolicyVerdict) => void;

function judgeOutcome(
  target: ImageTarget,
  outcome: ImageOutcome | undefined,
  startsContainers: boolean,
  judgement: ImageJudgement,
  record: RecordFailure,
): void {
  if (outcome === undefined) {
    record('not verified: infrastructure failure: no verification result', 'infrastructure', true);
  } else if (outcome.kind === 'invalid-reference') {
    record(`invalid image reference: ${oneLine(outcome.error.problem)}`, 'policy', true);
  } else if (outcome.kind === 'unpinned') {
    record(unpinnedText(outcome.policies), 'policy', true);
  } else if (outcome.kind === 'no-match') {
    if (outcome.action !== 'allow') record(noMatchText(outcome.action), 'policy', outcome.action === 'deny');
  } else if (outcome.kind === 'exempted') {
    // Nothing left to verify: the exemptions say why.
  } else if (outcome.verdicts.length === 0) {
    record('not verified: infrastructure failure: no policy verdict', 'infrastructure', true);
  } else {
    judgePolicies(outcome.verdicts, judgement, record);
    if (startsContainers && !target.image.includes('@') && judgement.denied.length === 0) {
      judgement.warned.push(UNPINNED_WARNING);
    }
  }
}

/** Each failing policy denies (enforce) or warns; a pass on a verification record warns. */
function judgePolicies(
  verdicts: readonly PolicyVerdict[],
  judgement: ImageJudgement,
  record: RecordFailure,
): void {
  for (const policy of verdicts) {
    if (policy.passed) {
      if (policy.grace !== undefined) judgement.warned.push(graceText(policy, policy.grace));
      continue;
    }
    record(policyText(policy, policy.failure), policy.failure.kind, policy.mode === 'enforce', policy);
  }
}

function noMatchText(action: NoMatchPolicy): string {
  return `no ClusterImagePolicy matches (no-match-policy: ${action})`;
}

/** The warning of an exception's use: the exception first, as the API server may cut long warnings. */
function exemptionText(exemption: Exemption): string {
  const reason = oneLine(exemption.reason);
  const short = reason.length > 200 ? `${reason.slice(0, 200)}...` : reason;
  return (
    `policy ${quote(exemption.policy)} not applied: exempted by ImagePolicyException ${exemption.exception} ` +
    `until ${exemption.expires} (${short})`
  );
}

function policyText(policy: PolicyVerdict, failure: VerificationFailure): string {
  const label = failure.kind === 'infrastructure' ? 'infrastructure failure: ' : '';
  const cause = failure.cause === undefined ? '' : ` (${describeCause(failure.cause)})`;
  return `policy ${quote(policy.policy)} (${policy.mode}): ${label}${oneLine(failure.reason)}${cause}`;
}

/** The warning of an image admitted on a verification record (stale-if-error). */
function graceText(
  policy: PolicyVerdict,
  grace: { readonly ageMs: number; readonly failure: VerificationFailure },
): string {
  const cause = grace.failure.cause === undefined ? '' : ` (${describeCause(grace.failure.cause)})`;
  return (
    `policy ${quote(policy.policy)} (${policy.mode}): admitted on a verification record ${formatAge(grace.ageMs)} old ` +
    `(stale-if-error): verification failed now: infrastructure failure: ${oneLine(grace.failure.reason)}${cause}`
  );
}

function imageLine(target: ImageTarget, parts: readonly string[]): string {
  // Shown as written when it is plain text; quoted when it holds spaces or control characters.
  const image = /^[\x21-\x7e]+$/.test(target.image) ? target.image : quote(target.image);
  return `${target.path} ${image}: ${parts.join('; ')}`;
}
