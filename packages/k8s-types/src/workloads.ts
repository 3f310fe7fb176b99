import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import type { KubeObject } from './admission.js';
import { ObjectShapeError } from './errors.js';
import { describe, isObject, type JsonObject } from './fields.js';

/** The kinds whose objects carry a pod spec, and so can start containers. */
export type WorkloadKind =
  | 'Pod'
  | 'Deployment'
  | 'ReplicaSet'
  | 'StatefulSet'
  | 'DaemonSet'
  | 'Job'
  | 'CronJob'
  | 'ReplicationController';

/** Where things live in one workload kind. One table entry per kind drives all code. */
export interface WorkloadInfo {
  readonly kind: WorkloadKind;
  /** API group: `''` for the core group. */
  readonly group: '' | 'apps' | 'batch';
  /** Plural resource name, as in webhook rules and `request.resource.resource`. */
  readonly resource: string;
  /** Path of the pod template (`metadata` + `spec`); `null` for Pod, which is its own template. */
  readonly templatePath: readonly string[] | null;
  /** Path of the pod spec. */
  readonly podSpecPath: readonly string[];
  /** Path of the scale field (`spec.replicas`, `spec.parallelism`); `null` where there is none. */
  readonly scalePath: readonly string[] | null;
  /** Kinds whose controllers create and own objects of this kind. */
  readonly ownerKinds: readonly WorkloadKind[];
}

const TEMPLATE = ['spec', 'template'] as const;
const TEMPLATE_SPEC = ['spec', 'template', 'spec'] as const;
const REPLICAS = ['spec', 'replicas'] as const;

export const WORKLOADS: Readonly<Record<WorkloadKind, WorkloadInfo>> = {
  Pod: {
    kind: 'Pod',
    group: '',
    resource: 'pods',
    templatePath: null,
    podSpecPath: ['spec'],
    scalePath: null,
    ownerKinds: ['ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'ReplicationController'],
  },
  Deployment: {
    kind: 'Deployment',
    group: 'apps',
    resource: 'deployments',
    templatePath: TEMPLATE,
    podSpecPath: TEMPLATE_SPEC,
    scalePath: REPLICAS,
    ownerKinds: [],
  },
  ReplicaSet: {
    kind: 'ReplicaSet',
    group: 'apps',
    resource: 'replicasets',
    templatePath: TEMPLATE,
    podSpecPath: TEMPLATE_SPEC,
    scalePath: REPLICAS,
    ownerKinds: ['Deployment'],
  },
  StatefulSet: {
    kind: 'StatefulSet',
    group: 'apps',
    resource: 'statefulsets',
    templatePath: TEMPLATE,
    podSpecPath: TEMPLATE_SPEC,
    scalePath: REPLICAS,
    ownerKinds: [],
  },
  DaemonSet: {
    kind: 'DaemonSet',
    group: 'apps',
    resource: 'daemonsets',
    templatePath: TEMPLATE,
    podSpecPath: TEMPLATE_SPEC,
    scalePath: null,
    ownerKinds: [],
  },
  Job: {
    kind: 'Job',
    group: 'batch',
    resource: 'jobs',
    templatePath: TEMPLATE,
    podSpecPath: TEMPLATE_SPEC,
    scalePath: ['spec', 'parallelism'],
    ownerKinds: ['CronJob'],
  },
  CronJob: {
    kind: 'CronJob',
    group: 'batch',
    resource: 'cronjobs',
    templatePath: ['spec', 'jobTemplate', 'spec', 'template'],
    podSpecPath: ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
    scalePath: null,
    ownerKinds: [],
  },
  ReplicationController: {
    kind: 'ReplicationController',
    group: '',
    resource: 'replicationcontrollers',
    templatePath: TEMPLATE,
    podSpecPath: TEMPLATE_SPEC,
    scalePath: REPLICAS,
    ownerKinds: [],
  },
};

export const WORKLOAD_LIST: readonly WorkloadInfo[] = Object.values(WORKLOADS);

/** The catalogue entry for an API group and kind, or `undefined` for kinds Signet does not cover. */
export function workloadForKind(group: string, kind: string): WorkloadInfo | undefined {
  const info = Object.hasOwn(WORKLOADS, kind) ? WORKLOADS[kind as WorkloadKind] : undefined;
  return info !== undefined && info.group === group ? info : undefined;
}

/** The catalogue entry for an API group and plural resource name (`apps`, `deployments`). */
export function workloadForResource(group: string, resource: string): WorkloadInfo | undefined {
  return WORKLOAD_LIST.find((info) => info.group === group && info.resource === resource);
}

/** `['spec', 'template', 'spec']` -> `spec.template.spec`. */
export function pathString(path: readonly string[]): string {
  return path.join('.');
}

/** The value at a field path, `undefined` when any step is missing or not an object. */
export function valueAt(object: unknown, path: readonly string[]): unknown {
  let current: unknown = object;
  for (const key of path) {
    if (!isObject(current)) return undefined;
    current = current[key];
  }
  return current;
}

/** The pod template of a workload (the Pod's `metadata` + `spec` for a Pod). */
export function podTemplateOf(info: WorkloadInfo, object: KubeObject): JsonObject | undefined {
  const template = info.templatePath === null ? object : valueAt(object, info.templatePath);
  return objectOrUndefined(template, info.templatePath);
}

/** The pod spec of a workload; `undefined` when the object has none. */
export function podSpecOf(info: WorkloadInfo, object: KubeObject): JsonObject | undefined {
  return objectOrUndefined(valueAt(object, info.podSpecPath), info.podSpecPath);
}

/**
 * The scale of a workload (`spec.replicas`, `spec.parallelism`). `undefined` for kinds without a
 * scale field and when the field is absent (the API server defaults it on write).
 */
export function scaleOf(info: WorkloadInfo, object: KubeObject): number | undefined {
  if (info.scalePath === null) return undefined;
  const value = valueAt(object, info.scalePath);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new ObjectShapeError(
      pathString(info.scalePath),
      `must be a non-negative integer, got ${describe(value)}`,
    );
  }
  return value;
}

/** The ownerReference with `controller: true`, if any. */
export function controllerOf(object: KubeObject): OwnerReference | undefined {
  const owners = object.metadata?.ownerReferences;
  if (!Array.isArray(owners)) return undefined;
  return owners.find((owner): owner is OwnerReference => isObject(owner) && owner.controller === true);
}

function objectOrUndefined(value: unknown, path: readonly string[] | null): JsonObject | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) {
    throw new ObjectShapeError(pathString(path ?? []), `must be an object, got ${describe(value)}`);
  }
  return value;
}
