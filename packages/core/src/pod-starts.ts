// Writes that start Pods without changing the pod template or raising the scale: resuming a paused
// Deployment, un-suspending a Job or a CronJob, releasing a StatefulSet's staged rollout (a lower
// partition, moved ordinals) and turning a StatefulSet's or DaemonSet's OnDelete strategy into a
// rolling update. Each makes the workload's controller create Pods it would not have created
// otherwise, so the contract verifies them as it verifies a raised scale (rows 6 and 5).
import type { KubeObject, WorkloadInfo, WorkloadKind } from '@signet/k8s-types';

/** One field whose change starts Pods, and how to tell that it did. */
interface StartTrigger {
  readonly path: readonly string[];
  /** True when going from `before` to `after` lets the controller start Pods. */
  readonly starts: (before: unknown, after: unknown) => boolean;
}

/** `true` -> anything else: the API server defaults an absent `paused`/`suspend` to false. */
const releasedFlag = (before: unknown, after: unknown) => before === true && after !== true;

/** Absent is RollingUpdate (the API server's default); only OnDelete -> RollingUpdate starts Pods. */
const onDeleteReleased = (before: unknown, after: unknown) =>
  before === 'OnDelete' && (after === undefined || after === null || after === 'RollingUpdate');

/** An absent number is 0 (a StatefulSet's partition and first ordinal default to 0). */
const numberOf = (value: unknown) => (typeof value === 'number' ? value : 0);

const TRIGGERS: Readonly<Partial<Record<WorkloadKind, readonly StartTrigger[]>>> = {
  Deployment: [{ path: ['spec', 'paused'], starts: releasedFlag }],
  Job: [{ path: ['spec', 'suspend'], starts: releasedFlag }],
  CronJob: [{ path: ['spec', 'suspend'], starts: releasedFlag }],
  StatefulSet: [
    {
      path: ['spec', 'updateStrategy', 'rollingUpdate', 'partition'],
      starts: (before, after) => numberOf(after) < numberOf(before),
    },
    { path: ['spec', 'ordinals', 'start'], starts: (before, after) => numberOf(after) !== numberOf(before) },
    { path: ['spec', 'updateStrategy', 'type'], starts: onDeleteReleased },
  ],
  DaemonSet: [{ path: ['spec', 'updateStrategy', 'type'], starts: onDeleteReleased }],
};

function at(object: KubeObject, path: readonly string[]): unknown {
  let node: unknown = object;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function shown(value: unknown): string {
  return value === undefined || value === null ? '(unset)' : JSON.stringify(value);
}

/**
 * The changes of an UPDATE (template and scale aside) that start Pods, each as
 * `spec.paused true -> false`; empty when none does. Pure: old and new object in, words out.
 */
export function podStartsOf(info: WorkloadInfo, old: KubeObject, object: KubeObject): string[] {
  const triggers = TRIGGERS[info.kind] ?? [];
  const found: string[] = [];
  for (const trigger of triggers) {
    const before = at(old, trigger.path);
    const after = at(object, trigger.path);
    if (trigger.starts(before, after))
      found.push(`${trigger.path.join('.')} ${shown(before)} -> ${shown(after)}`);
  }
  return found;
}
