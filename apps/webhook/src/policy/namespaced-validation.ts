// What `/validate-policy` refuses of Signet's namespaced objects before compiling anything: an
// ImagePolicy that would loosen the cluster (its parser refuses it, naming the field), and an
// ImagePolicyException without a reason, already expired, or meant to live longer than the
// operator allows. The same limits hold at admission (core), so an object that got past a Signet
// that could not answer (the webhook fails open) still cannot loosen anything.
import {
  compileException,
  compilePolicy,
  DEFAULT_MAX_EXCEPTION_LIFETIME_MS,
  exceptionState,
  InvalidPolicyError,
} from '@signet/core';
import {
  type AdmissionRequest,
  FieldError,
  type GroupVersionKind,
  type ImagePolicy,
  parseImagePolicy,
  parseImagePolicyException,
  SIGNET_POLICY_GROUP,
} from '@signet/k8s-types';
import type { PolicyObjects } from './policy-objects.js';
import type { CompileOptions } from './policy-store.js';

/** Whether the request is about Signet's `kind` (not another project's ImagePolicy). */
export function isNamespacedPolicyKind(
  requested: GroupVersionKind,
  kind: 'ImagePolicy' | 'ImagePolicyException',
): boolean {
  return requested.group === SIGNET_POLICY_GROUP && requested.kind === kind;
}

/** The ImagePolicy of the request, or why it is refused (a malformed or loosening field, a bad glob). */
export function readImagePolicy(request: AdmissionRequest, view: PolicyObjects): ImagePolicy | string {
  try {
    const policy = parseImagePolicy(request.object, {
      ...(request.namespace === undefined ? {} : { namespace: request.namespace }),
      failOnEmptyAuthorities: view.config.failOnEmptyAuthorities,
    });
    compilePolicy(policy);
    return policy;
  } catch (error) {
    if (error instanceof FieldError || error instanceof InvalidPolicyError) return error.message;
    throw error;
  }
}

/** Why an exception is refused (`refusal`), or what its author should know (`warnings`). */
export function exceptionProblems(
  request: AdmissionRequest,
  view: PolicyObjects,
  options: Pick<CompileOptions, 'maxExceptionLifetimeMs' | 'now'>,
): { readonly refusal?: string; readonly warnings: readonly string[] } {
  let compiled: ReturnType<typeof compileException>;
  let exception: ReturnType<typeof parseImagePolicyException>;
  try {
    exception = parseImagePolicyException(
      request.object,
      request.namespace === undefined ? {} : { namespace: request.namespace },
    );
    compiled = compileException(exception);
  } catch (error) {
    if (error instanceof FieldError || error instanceof InvalidPolicyError)
      return { refusal: error.message, warnings: [] };
    throw error;
  }
  const now = options.now?.().getTime() ?? Date.now();
  const max = options.maxExceptionLifetimeMs ?? DEFAULT_MAX_EXCEPTION_LIFETIME_MS;
  const { expires } = exception.spec;
  const state = exceptionState(compiled, now, max);
  if (state === 'expired') {
    return {
      refusal: `spec.expires: ${expires} has passed; an expired exception applies to nothing`,
      warnings: [],
    };
  }
  if (state === 'too-long') {
    const from = exception.metadata.creationTimestamp ?? 'now';
    return {
      refusal: `spec.expires: ${expires} is more than ${hours(max)} after the exception's creation (${from}), the longest an exception may live here; ask for a new one when it expires`,
      warnings: [],
    };
  }
  return { warnings: unknownPolicies(exception.metadata.namespace, exception.spec.policies, view) };
}

/** Named policies that do not exist (yet: applying a directory must not depend on its order). */
function unknownPolicies(
  namespace: string,
  named: readonly { readonly kind: string; readonly name: string }[],
  view: PolicyObjects,
): string[] {
  const cluster = new Set([
    ...view.policies.map((p) => p.metadata.name),
    ...view.unreadable.filter((p) => p.kind === 'ClusterImagePolicy').map((p) => p.name),
  ]);
  const own = new Set([
    ...view.imagePolicies.filter((p) => p.metadata.namespace === namespace).map((p) => p.metadata.name),
    ...view.unreadable
      .filter((p) => p.kind === 'ImagePolicy' && p.namespace === namespace)
      .map((p) => p.name),
  ]);
  return named
    .filter((p) => !(p.kind === 'ImagePolicy' ? own : cluster).has(p.name))
    .map(
      (p) =>
        `spec.policies: there is no ${p.kind} ${JSON.stringify(p.name)}${p.kind === 'ImagePolicy' ? ` in ${namespace}` : ''}; the exception applies to it once it exists`,
    );
}

function hours(ms: number): string {
  const h = ms / 3_600_000;
  return Number.isInteger(h) ? `${h}h` : `${ms} ms`;
}
