// What `status` each ClusterImagePolicy and TrustRoot should carry, from the snapshot compiled from
// it: one `Ready` condition (compiled and usable, or why not) in the shape policy-controller's CRDs
// give status (knative's duck type: observedGeneration, conditions, annotations), so
// `kubectl get clusterimagepolicy` shows whether each policy works.
import { isDeepStrictEqual } from 'node:util';
import type { CompiledAuthority } from '@signet/verifier';
import type { PolicySnapshot, SnapshotPolicy, TrustRootState } from './policy-store.js';

export type StatusKind = 'ClusterImagePolicy' | 'TrustRoot';

/** The condition Signet maintains, without its transition time. */
export interface ReadyCondition {
  readonly type: 'Ready';
  readonly status: 'True' | 'False';
  /**
   * CamelCase: Compiled, Loaded, Unreadable, Invalid, Unavailable, AuthorityUnavailable; an
   * exception's Active, Expired, TooLong.
   */
  readonly reason: string;
  readonly message: string;
}

/** The status one object should have. */
export interface DesiredStatus {
  readonly kind: StatusKind;
  readonly name: string;
  /** The generation it was compiled from; the status is written only onto that generation. */
  readonly generation: number | undefined;
  readonly condition: ReadyCondition;
  /** `status.annotations`: the authorities a policy has, by name and type. */
  readonly annotations: Readonly<Record<string, string>>;
}

/** The annotation that lists a policy's authorities (`release-key: key, ci: keyless`). */
export const AUTHORITIES_ANNOTATION = 'signet.dev/authorities';

/** Messages the API server stores are kept short. */
const MAX_MESSAGE = 1024;

export function clip(text: string): string {
  return text.length <= MAX_MESSAGE ? text : `${text.slice(0, MAX_MESSAGE - 1)}…`;
}

export function authorityList(authorities: readonly CompiledAuthority[]): string {
  return authorities
    .map((a) => `${a.name}: ${a.type === 'static' ? `static ${a.action}` : a.type}`)
    .join(', ');
}

function consequence(policy: SnapshotPolicy): string {
  return policy.mode === 'warn'
    ? 'it warns about every image it matches until fixed'
    : 'it denies every image it matches until fixed';
}

/** A ClusterImagePolicy's or ImagePolicy's `Ready` condition, from its compiled record. */
export function policyCondition(policy: SnapshotPolicy): ReadyCondition {
  if (policy.broken !== undefined) {
    const reason =
      policy.brokenKind === 'unreadable'
        ? 'Unreadable'
        : policy.brokenKind === 'passing'
          ? 'Unavailable'
          : 'Invalid';
    const retry = policy.brokenKind === 'passing' ? ' (tried again every minute)' : '';
    return {
      type: 'Ready',
      status: 'False',
      reason,
      message: clip(`${policy.broken}${retry}; ${consequence(policy)}`),
    };
  }
  const { authorities } = policy.compiled;
  const unavailable = authorities.flatMap((a) =>
    a.type !== 'static' && a.state.kind === 'unavailable'
      ? [`authority ${a.name}: ${a.state.reason.message}`]
      : [],
  );
  if (unavailable.length > 0) {
    return {
      type: 'Ready',
      status: 'False',
      reason: 'AuthorityUnavailable',
      message: clip(`${unavailable.join('; ')}; images it matches fail those authorities until that exists`),
    };
  }
  const count = authorities.length === 1 ? '1 authority' : `${authorities.length} authorities`;
  return {
    type: 'Ready',
    status: 'True',
    reason: 'Compiled',
    message: clip(`compiled, ${policy.mode}: ${count} (${authorityList(authorities)})`),
  };
}

function trustRootCondition(state: TrustRootState): ReadyCondition {
  if (state.problem === undefined) {
    return { type: 'Ready', status: 'True', reason: 'Loaded', message: `loaded (${state.form})` };
  }
  return {
    type: 'Ready',
    status: 'False',
    reason: state.problem.passing ? 'Unavailable' : 'Invalid',
    message: clip(`${state.problem.message}; policies that use it fail their authorities until fixed`),
  };
}

/** The status of every ClusterImagePolicy and TrustRoot the snapshot was compiled from. */
export function desiredStatuses(snapshot: PolicySnapshot): DesiredStatus[] {
  const policies = snapshot.policySet.policies.map(
    (policy): DesiredStatus => ({
      kind: 'ClusterImagePolicy',
      name: policy.name,
      generation: policy.generation,
      condition: policyCondition(policy),
      annotations:
        policy.broken === undefined
          ? { [AUTHORITIES_ANNOTATION]: clip(authorityList(policy.compiled.authorities)) }
          : {},
    }),
  );
  const trustRoots = [...snapshot.trustRoots].map(
    ([name, state]): DesiredStatus => ({
      kind: 'TrustRoot',
      name,
      generation: state.generation,
      condition: trustRootCondition(state),
      annotations: {},
    }),
  );
  return [...policies, ...trustRoots];
}

interface StoredCondition {
  readonly type?: unknown;
  readonly status?: unknown;
  readonly reason?: unknown;
  readonly message?: unknown;
  readonly lastTransitionTime?: unknown;
}

/**
 * The `status` to write over `current` (the object's status as stored), or `undefined` when it
 * already says the same. Signet owns the whole status once it writes it (conditions of other
 * types, e.g. policy-controller's, are dropped); `lastTransitionTime` changes only when the
 * condition's status does.
 */
export function statusUpdate(
  current: unknown,
  desired: Pick<DesiredStatus, 'generation' | 'condition' | 'annotations'>,
  now: Date,
): object | undefined {
  const stored = (typeof current === 'object' && current !== null ? current : {}) as {
    observedGeneration?: unknown;
    conditions?: unknown;
    annotations?: unknown;
  };
  const conditions = Array.isArray(stored.conditions) ? (stored.conditions as StoredCondition[]) : [];
  const ready = conditions.find((c) => c?.type === 'Ready');
  const { condition } = desired;
  const transition =
    ready?.status === condition.status && typeof ready.lastTransitionTime === 'string'
      ? ready.lastTransitionTime
      : now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const next = {
    ...(desired.generation === undefined ? {} : { observedGeneration: desired.generation }),
    conditions: [{ ...condition, lastTransitionTime: transition }],
    ...(Object.keys(desired.annotations).length > 0 ? { annotations: { ...desired.annotations } } : {}),
  };
  const same =
    conditions.length === 1 &&
    ready?.reason === condition.reason &&
    ready.message === condition.message &&
    ready.status === condition.status &&
    stored.observedGeneration === next.observedGeneration &&
    isDeepStrictEqual(stored.annotations ?? undefined, next.annotations);
  return same ? undefined : next;
}
