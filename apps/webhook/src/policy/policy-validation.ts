// `POST /validate-policy`: a ClusterImagePolicy or TrustRoot that cannot compile is refused at
// `kubectl apply` time with the compile error, as policy-controller refuses invalid policies. It is
// compiled as the running snapshot would compile it (against the cluster's current TrustRoots,
// Secrets and ConfigMaps), with two differences that keep a caller from spending what admission
// needs (issue 21): it compiles in capacity of its own (ValidationCapacity: its own engines and
// CEL worker, a few at a time, within the review's deadline, nothing kept), and offline: a KMS
// key, a TUF mirror or a remote policy is checked for form only, never fetched for a caller (the
// running snapshot fetches them with the real object). What depends on another object (a Secret
// or TrustRoot not created yet) is admitted with a warning: applying a directory of objects must
// not depend on their order. Deleting, and any write that leaves the spec as it is (finalizers,
// labels, annotations), is never refused, so a broken policy can always be removed or handed over.
//
// What could not be checked is refused with "try again", never admitted unchecked: a policy that
// cannot compile would load broken and deny everything it matches. That covers a check past its
// deadline, a check refused because too many run, an engine that failed, and a replica that has
// not loaded the policy objects yet. None of these can wedge `kubectl apply` for good: the first
// three pass with the attempt that is not crowded or late (a policy that never compiles within
// the webhook's timeout would not compile when loaded either: raise `timeoutSeconds` for one that
// needs longer); the last happens only before a replica is ready (one that is not ready is not in
// the Service's endpoints, so the API server rarely reaches it); and the chart registers this
// webhook with `failurePolicy: Ignore`, so a Signet that cannot answer at all never blocks it.
import { isDeepStrictEqual } from 'node:util';
import { compilePolicy, InvalidPolicyError } from '@signet/core';
import {
  type AdmissionRequest,
  FieldError,
  isObject,
  parseClusterImagePolicy,
  parseTrustRoot,
} from '@signet/k8s-types';
import type { ReviewContext, ReviewHandler, ReviewOutcome } from '../http/review.js';
import { type InputReference, referencedInputs } from './namespaced-references.js';
import { exceptionProblems, isNamespacedPolicyKind, readImagePolicy } from './namespaced-validation.js';
import type { PolicyObjects } from './policy-objects.js';
import {
  type CompileOptions,
  compileSnapshot,
  type PolicySnapshot,
  type SnapshotPolicy,
} from './policy-store.js';
import type { ValidationCapacity } from './validation-capacity.js';

export interface PolicyValidatorOptions {
  /** The objects policies are compiled against now; `undefined` until they are loaded. */
  readonly view: () => PolicyObjects | undefined;
  /**
   * True on a cluster: Signet reads a team's Secrets and ConfigMaps only once a stored ImagePolicy
   * names them (ADR 0028), so what a new ImagePolicy names may exist without being in the view.
   */
  readonly readsInputsByReference?: boolean;
  /** As the running snapshot compiles; its engines and CEL host are replaced by the capacity's. */
  readonly compile: CompileOptions;
  readonly capacity: ValidationCapacity;
}

function admitted(rule: string, warnings: readonly string[] = []): ReviewOutcome {
  return {
    response: { allowed: true, ...(warnings.length > 0 ? { warnings: [...warnings] } : {}) },
    decision: warnings.length > 0 ? 'warned' : 'allowed',
    rule,
    ...(warnings.length > 0 ? { reason: warnings.join(' | '), warnings } : {}),
  };
}

function refused(message: string): ReviewOutcome {
  return {
    response: { allowed: false, status: { code: 422, reason: 'Invalid', message } },
    decision: 'denied',
    rule: 'invalid-policy',
    reason: message,
  };
}

/** Not checked, for a reason that passes: refused, asking to try again. */
function notChecked(rule: string, code: number, reason: string, message: string): ReviewOutcome {
  return {
    response: { allowed: false, status: { code, reason, message } },
    decision: 'denied',
    rule,
    reason: message,
  };
}

const LATE = notChecked(
  'not-checked-late',
  503,
  'ServiceUnavailable',
  'Signet could not check this object in time, so it was not admitted; try again',
);
const BUSY = notChecked(
  'not-checked-busy',
  429,
  'TooManyRequests',
  'Signet is checking too many policy objects at once, so this one was not admitted; try again',
);
const NOT_LOADED = notChecked(
  'not-checked-not-loaded',
  503,
  'ServiceUnavailable',
  'Signet has not loaded the policy objects yet, so this one could not be checked; try again in a few seconds',
);

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Whether the write changes what is compiled (a CREATE always does). */
function specChanged(request: AdmissionRequest): boolean {
  if (request.operation !== 'UPDATE') return true;
  const before = isObject(request.oldObject) ? request.oldObject.spec : undefined;
  const after = isObject(request.object) ? request.object.spec : undefined;
  return !isDeepStrictEqual(before, after);
}

/** Compiles `candidate` offline in the validation capacity, within the review's deadline. */
async function compileChecked(
  candidate: PolicyObjects,
  options: PolicyValidatorOptions,
  context: ReviewContext,
  loadAllTrustRoots: boolean,
): Promise<PolicySnapshot | ReviewOutcome> {
  // Answered a little before the deadline, so that the answer is not the HTTP layer's.
  const outcome = await options.capacity.run(context.deadline - 50, async (tools) => {
    const result = await compileSnapshot(candidate, {
      ...options.compile,
      engines: tools.engines,
      cel: tools.cel,
      offline: true,
      loadAllTrustRoots,
    });
    return result.snapshot;
  });
  if (outcome.kind === 'busy') return BUSY;
  if (outcome.kind === 'late') return LATE;
  if (outcome.value === undefined) throw new Error('the policies could not be compiled');
  return outcome.value;
}

function isOutcome(value: PolicySnapshot | ReviewOutcome): value is ReviewOutcome {
  return 'response' in value;
}

async function checkPolicy(
  object: unknown,
  view: PolicyObjects,
  options: PolicyValidatorOptions,
  context: ReviewContext,
): Promise<ReviewOutcome> {
  let policy: ReturnType<typeof parseClusterImagePolicy>;
  try {
    policy = parseClusterImagePolicy(object, { failOnEmptyAuthorities: view.config.failOnEmptyAuthorities });
    compilePolicy(policy);
  } catch (error) {
    if (error instanceof FieldError || error instanceof InvalidPolicyError) return refused(messageOf(error));
    throw error;
  }
  const candidate: PolicyObjects = {
    ...view,
    policies: [policy],
    imagePolicies: [],
    exceptions: [],
    unreadable: [],
    problems: [],
  };
  const snapshot = await compileChecked(candidate, options, context, false);
  if (isOutcome(snapshot)) return snapshot;
  return compiledOutcome(snapshot.policySet.policies[0]);
}

/**
 * The answer for a policy compiled as the running snapshot would: refused only if it cannot be
 * enforced. `notYet` are warnings to add; an authority unavailable for a reason `unread` knows
 * (a Secret Signet has not read yet) is said by them instead.
 */
function compiledOutcome(
  record: SnapshotPolicy | undefined,
  notYet: readonly string[] = [],
  unread: (message: string) => boolean = () => false,
): ReviewOutcome {
  if (record === undefined) return admitted('compiled', notYet);
  if (record.broken !== undefined) {
    // Offline, nothing is fetched: what may pass is an engine that failed (out of time or memory).
    if (record.brokenKind === 'passing')
      return notChecked('not-checked-engine', 503, 'ServiceUnavailable', `${record.broken}; try again`);
    return refused(record.broken);
  }
  const warnings = record.compiled.authorities.flatMap((a) =>
    a.type !== 'static' &&
    a.state.kind === 'unavailable' &&
    a.state.reason.code !== 'NOT_FETCHED' &&
    !unread(a.state.reason.message)
      ? [
          `authority ${JSON.stringify(a.name)}: ${a.state.reason.message}: images it matches fail it until that exists`,
        ]
      : [],
  );
  return admitted('compiled', [...warnings, ...notYet]);
}

async function checkTrustRoot(
  object: unknown,
  view: PolicyObjects,
  options: PolicyValidatorOptions,
  context: ReviewContext,
): Promise<ReviewOutcome> {
  let root: ReturnType<typeof parseTrustRoot>;
  try {
    root = parseTrustRoot(object);
  } catch (error) {
    if (error instanceof FieldError) return refused(messageOf(error));
    throw error;
  }
  const candidate: PolicyObjects = {
    ...view,
    policies: [],
    imagePolicies: [],
    exceptions: [],
    unreadable: [],
    trustRoots: [root],
    problems: [],
  };
  const snapshot = await compileChecked(candidate, options, context, true);
  if (isOutcome(snapshot)) return snapshot;
  const problem = snapshot.trustRoots.get(root.metadata.name)?.problem;
  if (problem === undefined) return admitted('compiled');
  if (problem.passing)
    return admitted('compiled', [`${problem.message} (Signet tries again when policies change)`]);
  return refused(problem.message);
}

/** An ImagePolicy: refused when it would loosen the cluster (see `looseningsOf`) or cannot compile. */
async function checkImagePolicy(
  request: AdmissionRequest,
  view: PolicyObjects,
  options: PolicyValidatorOptions,
  context: ReviewContext,
): Promise<ReviewOutcome> {
  const policy = readImagePolicy(request, view);
  if (typeof policy === 'string') return refused(policy);
  const unread = options.readsInputsByReference ? unreadInputs(request.object, view) : [];
  const notYet =
    unread.length === 0
      ? []
      : [
          `${unread.map((r) => `${r.kind} ${r.namespace}/${r.name}`).join(', ')}: read by Signet once this ImagePolicy is stored; its status says whether it compiled`,
        ];
  // A policy program cannot be checked without its ConfigMap: its status will say.
  if (unread.some((r) => r.kind === 'ConfigMap')) return admitted('not-checked-unread', notYet);
  const candidate: PolicyObjects = {
    ...view,
    policies: [],
    imagePolicies: [policy],
    exceptions: [],
    unreadable: [],
    problems: [],
  };
  const snapshot = await compileChecked(candidate, options, context, false);
  if (isOutcome(snapshot)) return snapshot;
  const record = snapshot.policySet.namespaced.get(policy.metadata.namespace)?.[0];
  return compiledOutcome(record, notYet, (message) =>
    unread.some((r) => message === `Secret ${r.namespace}/${r.name} not found`),
  );
}

/** What `object` (an ImagePolicy) names that the view does not hold. */
function unreadInputs(object: unknown, view: PolicyObjects): InputReference[] {
  const held = new Set([
    ...view.secrets.map((s) => `Secret/${s.namespace}/${s.name}`),
    ...view.configMaps.map((c) => `ConfigMap/${c.namespace}/${c.name}`),
  ]);
  return referencedInputs(object).filter((r) => !held.has(`${r.kind}/${r.namespace}/${r.name}`));
}

/** An ImagePolicyException: refused without a reason, expired, or living longer than allowed. */
function checkException(
  request: AdmissionRequest,
  view: PolicyObjects,
  options: PolicyValidatorOptions,
): ReviewOutcome {
  const { refusal, warnings } = exceptionProblems(request, view, options.compile);
  return refusal === undefined ? admitted('compiled', warnings) : refused(refusal);
}

/** The `/validate-policy` handler. */
export function policyValidator(options: PolicyValidatorOptions): ReviewHandler {
  return async (_endpoint, request, context) => {
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return admitted('not-checked');
    const object = request.object;
    if (isObject(object) && isObject(object.metadata) && object.metadata.deletionTimestamp)
      return admitted('deleting');
    if (!specChanged(request)) return admitted('spec-unchanged');
    const view = options.view();
    if (view === undefined) return NOT_LOADED;
    if (request.kind.kind === 'ClusterImagePolicy') return checkPolicy(object, view, options, context);
    if (request.kind.kind === 'TrustRoot') return checkTrustRoot(object, view, options, context);
    if (isNamespacedPolicyKind(request.kind, 'ImagePolicy'))
      return checkImagePolicy(request, view, options, context);
    if (isNamespacedPolicyKind(request.kind, 'ImagePolicyException'))
      return checkException(request, view, options);
    return admitted('not-checked');
  };
}
