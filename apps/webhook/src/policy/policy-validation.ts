// `POST /validate-policy`: a ClusterImagePolicy or TrustRoot that cannot compile is refused at
// `kubectl apply` time with the compile error, as policy-controller refuses invalid policies. It is
// compiled exactly as the running snapshot would compile it (against the cluster's current
// TrustRoots, Secrets and ConfigMaps). What depends on other objects or on the network (a Secret
// or TrustRoot not created yet, a remote policy that cannot be fetched now) is admitted with a
// warning: applying a directory of objects must not depend on their order. Deleting, and any
// write that leaves the spec as it is (finalizers, labels, annotations), is never refused, so a
// broken policy can always be removed or handed over.
import { isDeepStrictEqual } from 'node:util';
import { compilePolicy, InvalidPolicyError } from '@signet/core';
import {
  type AdmissionRequest,
  FieldError,
  isObject,
  parseClusterImagePolicy,
  parseTrustRoot,
} from '@signet/k8s-types';
import type { ReviewContext, ReviewHandler, ReviewOutcome } from '../http/admission-app.js';
import { exceptionProblems, isNamespacedPolicyKind, readImagePolicy } from './namespaced-validation.js';
import type { PolicyObjects } from './policy-objects.js';
import {
  type CompileOptions,
  compileSnapshot,
  type PolicySnapshot,
  type SnapshotPolicy,
} from './policy-store.js';

export interface PolicyValidatorOptions {
  /** The objects policies are compiled against now; `undefined` until they are loaded. */
  readonly view: () => PolicyObjects | undefined;
  readonly compile: CompileOptions;
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

/** Compiles, or answers for the compile when it runs past the review's deadline (fail open). */
async function withinDeadline(
  compile: Promise<PolicySnapshot | undefined>,
  context: ReviewContext,
): Promise<PolicySnapshot | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), Math.max(0, context.deadline - Date.now() - 50));
  });
  try {
    const result = await Promise.race([compile, late]);
    if (result === undefined) throw new Error('the policies could not be compiled');
    return result;
  } finally {
    clearTimeout(timer);
  }
}

const LATE_WARNING = 'Signet could not finish compiling this object in time; it was not checked';

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
  const compiled = compileSnapshot(candidate, { ...options.compile, loadAllTrustRoots: false }).then(
    (r) => r.snapshot,
  );
  const snapshot = await withinDeadline(compiled, context);
  if (snapshot === 'late') return admitted('not-checked', [LATE_WARNING]);
  return compiledOutcome(snapshot.set.policies[0]);
}

/** The answer for a policy compiled as the running snapshot would: refused only if it cannot be enforced. */
function compiledOutcome(record: SnapshotPolicy | undefined): ReviewOutcome {
  if (record === undefined) return admitted('compiled');
  if (record.broken !== undefined) {
    if (record.brokenKind === 'passing')
      return admitted('compiled', [
        `${record.broken} (Signet tries again every minute; until then it denies what it matches)`,
      ]);
    return refused(record.broken);
  }
  const warnings = record.verify.compiled.authorities.flatMap((a) =>
    a.type !== 'static' && a.state.kind === 'unavailable'
      ? [
          `authority ${JSON.stringify(a.name)}: ${a.state.reason.message}: images it matches fail it until that exists`,
        ]
      : [],
  );
  return admitted('compiled', warnings);
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
  const snapshot = await withinDeadline(
    compileSnapshot(candidate, options.compile).then((r) => r.snapshot),
    context,
  );
  if (snapshot === 'late') return admitted('not-checked', [LATE_WARNING]);
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
  const candidate: PolicyObjects = {
    ...view,
    policies: [],
    imagePolicies: [policy],
    exceptions: [],
    unreadable: [],
    problems: [],
  };
  const compiled = compileSnapshot(candidate, { ...options.compile, loadAllTrustRoots: false }).then(
    (r) => r.snapshot,
  );
  const snapshot = await withinDeadline(compiled, context);
  if (snapshot === 'late') return admitted('not-checked', [LATE_WARNING]);
  return compiledOutcome(snapshot.set.namespaced.get(policy.metadata.namespace)?.[0]);
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
    if (view === undefined)
      return admitted('not-checked', [
        'Signet has not loaded the policy objects yet; this one was not checked',
      ]);
    if (request.kind.kind === 'ClusterImagePolicy') return checkPolicy(object, view, options, context);
    if (request.kind.kind === 'TrustRoot') return checkTrustRoot(object, view, options, context);
    if (isNamespacedPolicyKind(request.kind, 'ImagePolicy'))
      return checkImagePolicy(request, view, options, context);
    if (isNamespacedPolicyKind(request.kind, 'ImagePolicyException'))
      return checkException(request, view, options);
    return admitted('not-checked');
  };
}
