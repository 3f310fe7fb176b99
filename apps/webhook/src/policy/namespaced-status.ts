// What `status` each namespace's ImagePolicy and ImagePolicyException should carry, from the
// snapshot compiled from them and the time: an ImagePolicy's `Ready` condition as a
// ClusterImagePolicy's; an exception's says whether it applies now (Active), no longer (Expired),
// never (TooLong: it would outlive the maximum lifetime; Invalid: it does not parse or compile).
// An exception's condition changes with time alone, so its writer comes back at the next expiry.
import { type CompiledException, exceptionState } from '@signet/core';
import { clip, type DesiredStatus, policyCondition, type ReadyCondition } from './policy-status.js';
import type { PolicySnapshot } from './policy-store.js';

export type NamespacedStatusKind = 'ImagePolicy' | 'ImagePolicyException';

/** The status one namespaced object should have. */
export interface NamespacedStatus extends Pick<DesiredStatus, 'generation' | 'condition' | 'annotations'> {
  readonly kind: NamespacedStatusKind;
  readonly namespace: string;
  readonly name: string;
}

/** The status of every ImagePolicy and ImagePolicyException of `snapshot`, as of `now`. */
export function namespacedStatuses(snapshot: PolicySnapshot, now: number): NamespacedStatus[] {
  const { policySet } = snapshot;
  const policies = [...policySet.namespaced.values()].flat().map((policy): NamespacedStatus => {
    const { namespace = '', name } = policy.policy.metadata as { namespace?: string; name: string };
    return {
      kind: 'ImagePolicy',
      namespace,
      name,
      generation: policy.generation,
      condition: policyCondition(policy),
      annotations: {},
    };
  });
  const exceptions = [...policySet.exceptions.values()].flat().map(
    (exception): NamespacedStatus => ({
      kind: 'ImagePolicyException',
      namespace: exception.namespace,
      name: exception.exception.metadata.name,
      generation: exception.exception.metadata.generation,
      condition: exceptionCondition(exception, now, policySet.maxExceptionLifetimeMs),
      annotations: {},
    }),
  );
  const unusable = [...snapshot.unusableExceptions].map(([key, problem]): NamespacedStatus => {
    const [namespace = '', name = ''] = key.split('/');
    return {
      kind: 'ImagePolicyException',
      namespace,
      name,
      generation: problem.generation,
      condition: {
        type: 'Ready',
        status: 'False',
        reason: 'Invalid',
        message: clip(`${problem.message}; it exempts nothing until fixed`),
      },
      annotations: {},
    };
  });
  return [...policies, ...exceptions, ...unusable];
}

/**
 * When the soonest active exception expires (epoch ms), or `undefined` when none will: the
 * conditions (and what a background scan would find) change then without any object changing.
 */
export function nextExceptionExpiry(snapshot: PolicySnapshot, now: number): number | undefined {
  const { exceptions, maxExceptionLifetimeMs } = snapshot.policySet;
  let soonest: number | undefined;
  for (const exception of [...exceptions.values()].flat()) {
    if (exceptionState(exception, now, maxExceptionLifetimeMs) !== 'active') continue;
    if (soonest === undefined || exception.expiresAt < soonest) soonest = exception.expiresAt;
  }
  return soonest;
}

function exceptionCondition(
  exception: CompiledException,
  now: number,
  maxLifetimeMs: number,
): ReadyCondition {
  const state = exceptionState(exception, now, maxLifetimeMs);
  const { expires } = exception;
  if (state === 'expired') {
    return {
      type: 'Ready',
      status: 'False',
      reason: 'Expired',
      message: `expired at ${expires}: it exempts nothing`,
    };
  }
  if (state === 'too-long') {
    const created = exception.exception.metadata.creationTimestamp ?? 'now';
    return {
      type: 'Ready',
      status: 'False',
      reason: 'TooLong',
      message: clip(
        `expires at ${expires}, more than the maximum lifetime (${hours(maxLifetimeMs)}) after its creation at ${created}: it exempts nothing`,
      ),
    };
  }
  const policies = exception.exception.spec.policies.map((p) => `${p.kind} ${p.name}`).join(', ');
  return {
    type: 'Ready',
    status: 'True',
    reason: 'Active',
    message: clip(`exempts its images from ${policies} until ${expires}`),
  };
}

function hours(ms: number): string {
  const h = ms / 3_600_000;
  return Number.isInteger(h) ? `${h}h` : `${Math.round(ms / 1000)}s`;
}
