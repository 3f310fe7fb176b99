// The validating decision table of the admission contract (docs/admission-contract.md):
// admit without touching a registry, or the images that must be verified and the image fields
// that may be pinned to digests. Pure: the request in, the decision out.
import {
  type AdmissionRequest,
  controllerOf,
  type ImageAt,
  imagesOf,
  type KubeObject,
  pathString,
  podSpecOf,
  podTemplateOf,
  REGISTERED_SUBRESOURCES,
  scaleOf,
  type WorkloadInfo,
  workloadForResource,
} from '@signet/k8s-types';
import { semanticEqual } from './equality.js';
import { changedImages } from './image-changes.js';
import { podStartsOf } from './pod-starts.js';
import { jsonPointer } from './pointer.js';

/** Why a request is admitted without verification. */
export type AdmitRule =
  /** Not CREATE or UPDATE (never registered). */
  | 'operation-not-covered'
  /** Row 2: an UPDATE of `status` or `scale` (never registered). */
  | 'status-or-scale-subresource'
  /** A resource or subresource Signet does not register (defensive). */
  | 'resource-not-covered'
  /** Row 1: the old or new object has `metadata.deletionTimestamp`. */
  | 'being-deleted'
  /** Row 4: template semantically equal, scale lowered. */
  | 'scale-down'
  /** Row 4: template semantically equal, scale unchanged or no scale field. */
  | 'template-unchanged'
  /** Row 5: template equal, scale raised by the workload's controller owner; carries a warning. */
  | 'owned-scale-up'
  /**
   * Row 5: template equal, a change that starts Pods (resumed, un-suspended, a rollout released)
   * on a workload with a controller owner; carries a warning.
   */
  | 'owned-start'
  /** Row 8 (and row 10 with nothing added): no image field of the Pod changed. */
  | 'pod-images-unchanged';

/** Why images must be verified. */
export type VerifyRule =
  /** Row 3: CREATE of any covered kind; every image of the pod spec. */
  | 'create'
  /** Row 6: template equal, scale raised on a workload without a controller owner; every image. */
  | 'top-level-scale-up'
  /**
   * Row 6: template equal, a change that starts Pods on a workload without a controller owner (a
   * Deployment resumed, a Job or CronJob un-suspended, a StatefulSet's partition lowered or its
   * ordinals moved, an OnDelete strategy turned into a rolling update); every image.
   */
  | 'top-level-start'
  /** Row 7: the template changed in any way; every image of the new template. */
  | 'template-changed'
  /** Row 9: a Pod UPDATE that changes image fields; the changed images only. */
  | 'pod-images-changed'
  /** Row 10: `pods/ephemeralcontainers`; the added (or changed) images only. */
  | 'ephemeral-containers-added';

/** One image field of the admitted object. */
export interface ImageTarget extends ImageAt {
  /** RFC 6901 pointer to the field, for JSON patches: `/spec/template/spec/containers/0/image`. */
  readonly pointer: string;
}

/** Why a request is denied without verification. */
export type DenyRule =
  /** A registered resource whose object is not of the kind Signet reads there: it cannot tell what would run. */
  'unreadable-request';

export interface AdmitDecision {
  readonly action: 'admit';
  readonly rule: AdmitRule;
  /** An admission warning to return (set for `owned-scale-up`). */
  readonly warning?: string;
}

export interface VerifyDecision {
  readonly action: 'verify';
  readonly rule: VerifyRule;
  /** Every image that must pass policy for the request to be admitted. */
  readonly images: readonly ImageTarget[];
  /**
   * The image fields the mutating endpoint may pin to a digest: the images without one, and
   * none for `top-level-scale-up` and `top-level-start`, whose template is unchanged (pinning it would start a
   * rollout, is rejected for a Job's immutable template, and makes GitOps tools see drift).
   */
  readonly mutations: readonly ImageTarget[];
  /**
   * True when admitting starts containers from these images (a Pod, or its ephemeral
   * containers): what is admitted is what the kubelet pulls, so a tag must be pinned to the
   * digest that was verified. False for workload templates, whose Pods are checked at CREATE.
   */
  readonly startsContainers: boolean;
}

export interface DenyDecision {
  readonly action: 'deny';
  readonly rule: DenyRule;
  readonly reason: string;
}

export type AdmissionDecision = AdmitDecision | VerifyDecision | DenyDecision;

export interface DecideOptions {
  /** Plan digest pinning (tag -> tag@digest) for verified images; default true. */
  readonly resolveDigests?: boolean;
}

/** Kubernetes defaults `spec.replicas` and `spec.parallelism` to 1 when they are absent. */
const DEFAULT_SCALE = 1;

/**
 * Decides a parsed AdmissionRequest by the contract's table. What a request is comes from its
 * resource and subresource (what the API server routed), never from the kind it claims. Throws
 * the `ObjectShapeError` of `@signet/k8s-types` when an object does not have the shape its kind
 * requires.
 */
export function decideAdmission(request: AdmissionRequest, options: DecideOptions = {}): AdmissionDecision {
  const { operation, subResource } = request;
  if (operation !== 'CREATE' && operation !== 'UPDATE') return admit('operation-not-covered');
  if (subResource === 'status' || subResource === 'scale') return admit('status-or-scale-subresource');
  const info = workloadForResource(request.resource.group, request.resource.resource);
  if (info === undefined) return admit('resource-not-covered');
  if (subResource && !(REGISTERED_SUBRESOURCES[info.resource] ?? []).includes(subResource))
    return admit('resource-not-covered');
  if (request.kind.group !== info.group || request.kind.kind !== info.kind) return unreadable(request, info);
  const object: KubeObject = request.object ?? {};
  const old = request.oldObject;
  // An UPDATE always carries the old object; without one, verify as for a CREATE.
  if (operation === 'CREATE' || old === null) return verify('create', info, targetsOf(info, object), options);
  if (isBeingDeleted(old) || isBeingDeleted(object)) return admit('being-deleted');
  if (info.templatePath === null) {
    const changed = changedImages(
      podSpecOf(info, old),
      podSpecOf(info, object),
      pathString(info.podSpecPath),
    );
    if (changed.length === 0) return admit('pod-images-unchanged');
    const rule = subResource === 'ephemeralcontainers' ? 'ephemeral-containers-added' : 'pod-images-changed';
    return verify(rule, info, changed, options);
  }
  return decideWorkloadUpdate(info, old, object, options);
}

function decideWorkloadUpdate(
  info: WorkloadInfo,
  old: KubeObject,
  object: KubeObject,
  options: DecideOptions,
): AdmissionDecision {
  if (!semanticEqual(podTemplateOf(info, old), podTemplateOf(info, object))) {
    return verify('template-changed', info, targetsOf(info, object), options);
  }
  // Resuming, un-suspending or releasing a staged rollout starts Pods as a raised scale does.
  const starts = podStartsOf(info, old, object);
  const before = info.scalePath === null ? DEFAULT_SCALE : (scaleOf(info, old) ?? DEFAULT_SCALE);
  const after = info.scalePath === null ? DEFAULT_SCALE : (scaleOf(info, object) ?? DEFAULT_SCALE);
  if (after <= before && starts.length === 0) {
    return admit(after < before ? 'scale-down' : 'template-unchanged');
  }
  const owner = controllerOf(object);
  const raised = after > before;
  if (owner !== undefined) {
    const change =
      raised && info.scalePath !== null
        ? `${pathString(info.scalePath)} raised from ${before} to ${after}`
        : starts.join(', ');
    return admit(
      raised ? 'owned-scale-up' : 'owned-start',
      ownedStartWarning(info, object, change, `${owner.kind}/${owner.name}`),
    );
  }
  return verify(raised ? 'top-level-scale-up' : 'top-level-start', info, targetsOf(info, object), options);
}

/** The warning of row 5: what was admitted unverified, and where verification still happens. */
function ownedStartWarning(info: WorkloadInfo, object: KubeObject, change: string, owner: string): string {
  const name = [object.metadata?.namespace, object.metadata?.name]
    .filter((part) => part !== undefined)
    .join('/');
  return (
    `${info.kind} ${name}: ${change} by its controller ${owner}; admitted without verifying images, ` +
    'each new Pod is verified when it is created'
  );
}

function unreadable(request: AdmissionRequest, info: WorkloadInfo): DenyDecision {
  const { group, kind } = request.kind;
  const resource = `${request.resource.resource}${request.subResource ? `/${request.subResource}` : ''}`;
  const sent = `${group === '' ? '' : `${group}/`}${kind}`;
  const expected = `${info.group === '' ? '' : `${info.group}/`}${info.kind}`;
  return {
    action: 'deny',
    rule: 'unreadable-request',
    reason:
      `cannot read a ${resource} request carrying a ${sent} object (expected ${expected}; ` +
      'an API server older than Kubernetes 1.23 sends this for ephemeral containers): denied, since what it would run cannot be checked',
  };
}

function admit(rule: AdmitRule, warning?: string): AdmitDecision {
  return warning === undefined ? { action: 'admit', rule } : { action: 'admit', rule, warning };
}

function verify(
  rule: VerifyRule,
  info: WorkloadInfo,
  images: readonly ImageAt[],
  options: DecideOptions,
): VerifyDecision {
  const targets = images.map((image) => targetOf(info, image));
  // Rows 6: the template is unchanged, and pinning it would start a rollout.
  const pin = options.resolveDigests !== false && rule !== 'top-level-scale-up' && rule !== 'top-level-start';
  const mutations = pin ? targets.filter((target) => !target.image.includes('@')) : [];
  return { action: 'verify', rule, images: targets, mutations, startsContainers: info.templatePath === null };
}

function targetsOf(info: WorkloadInfo, object: KubeObject): ImageAt[] {
  return imagesOf(podSpecOf(info, object), pathString(info.podSpecPath));
}

function targetOf(info: WorkloadInfo, image: ImageAt): ImageTarget {
  const field = image.field === 'volumes' ? ['image', 'reference'] : ['image'];
  return {
    ...image,
    pointer: jsonPointer([...info.podSpecPath, image.field, String(image.index), ...field]),
  };
}

function isBeingDeleted(object: KubeObject): boolean {
  const timestamp = object.metadata?.deletionTimestamp;
  return timestamp !== undefined && timestamp !== null;
}
