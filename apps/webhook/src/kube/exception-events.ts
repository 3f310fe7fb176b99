// An Event for each use of an ImagePolicyException (an image admitted without a policy it names),
// where the namespace's team looks: on the admitted object's owner (the ReplicaSet of a Pod), on
// the object itself when it already exists, else on the namespace. Bounded, because a Deployment
// of a hundred replicas is a hundred uses: one Event per exception and object in a while, and a
// cap on all of them per minute; the uses not told as Events are still counted in
// `signet_exception_uses_total` and logged.
import type { AdmissionRequest } from '@signet/k8s-types';
import type { ExceptionUse } from '../admission/admission-service.js';
import type { Logger } from '../logger.js';
import { createWarningEvent, type InvolvedObject as EventObject } from './events.js';
import type { KubeApi } from './kube-api.js';

export interface ExceptionEventsOptions {
  readonly api: KubeApi;
  readonly logger: Logger;
  /** One Event per exception and object in this time (default 10 minutes). */
  readonly perObjectIntervalMs?: number;
  /** Events at most in any minute (default 30). */
  readonly maxPerMinute?: number;
  /** Exception and object pairs remembered (default 1,000; the oldest is forgotten first). */
  readonly maxRemembered?: number;
  readonly now?: () => number;
}

/** An exception's Events are in the namespace of the object that used it. */
interface InvolvedObject extends EventObject {
  readonly namespace: string;
}

const MINUTE_MS = 60_000;
/** A name the API server takes (an owner reference is the requester's to write). */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]{0,198}[a-z0-9])?$/;

export class ExceptionEvents {
  readonly #options: ExceptionEventsOptions;
  readonly #now: () => number;
  /** When an Event was last recorded per exception and object, oldest first. */
  readonly #last = new Map<string, number>();
  #windowStart = 0;
  #inWindow = 0;

  constructor(options: ExceptionEventsOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Records what `request` (admitted, not a dry run) used, within the bounds; never throws. */
  record(request: AdmissionRequest, uses: readonly ExceptionUse[]): void {
    if (uses.length === 0 || request.namespace === undefined || request.namespace === '') return;
    const involved = involvedObjectOf(request, request.namespace);
    const byException = new Map<string, ExceptionUse[]>();
    for (const use of uses)
      byException.set(use.exemption.exception, [...(byException.get(use.exemption.exception) ?? []), use]);
    for (const [exception, used] of byException) {
      if (!this.#admit(`${exception}|${involved.kind}/${involved.name}`)) continue;
      void this.#create(involved, request, used);
    }
  }

  /** Whether an Event for `key` may be recorded now (and if so, counts it). */
  #admit(key: string): boolean {
    const now = this.#now();
    const last = this.#last.get(key);
    if (last !== undefined && now - last < (this.#options.perObjectIntervalMs ?? 10 * MINUTE_MS))
      return false;
    if (now - this.#windowStart >= MINUTE_MS) {
      this.#windowStart = now;
      this.#inWindow = 0;
    }
    if (this.#inWindow >= (this.#options.maxPerMinute ?? 30)) return false;
    this.#inWindow += 1;
    this.#last.delete(key);
    this.#last.set(key, now);
    const max = this.#options.maxRemembered ?? 1000;
    for (const oldest of this.#last.keys()) {
      if (this.#last.size <= max) break;
      this.#last.delete(oldest);
    }
    return true;
  }

  async #create(involved: InvolvedObject, request: AdmissionRequest, uses: readonly ExceptionUse[]) {
    const { api, logger } = this.#options;
    const [first] = uses;
    if (first === undefined) return;
    const { exception, expires, reason } = first.exemption;
    const what = request.name ? `${request.kind.kind} ${request.name}` : `a ${request.kind.kind}`;
    const images = uses.map((u) => `${u.path} ${u.image} without policy "${u.exemption.policy}"`).join('; ');
    const message = `${what} admitted: ${images}: exempted by ImagePolicyException ${exception} until ${expires} (${reason})`;
    const now = new Date(this.#now());
    try {
      await createWarningEvent(api, {
        namespace: involved.namespace,
        involved,
        reason: 'PolicyExempted',
        message,
        component: 'signet',
        at: now,
      });
    } catch (error) {
      logger.warn({ err: error, exception }, 'could not record the Event of an exception use');
    }
  }
}

/**
 * Where the team looks: the controller that owns the object (a Pod's ReplicaSet), the object when
 * it exists already (an update), else the namespace (a new Deployment, a bare Pod).
 */
function involvedObjectOf(request: AdmissionRequest, namespace: string): InvolvedObject {
  const metadata = request.object?.metadata ?? {};
  const owners = (metadata as { ownerReferences?: unknown }).ownerReferences;
  const controller = Array.isArray(owners)
    ? (
        owners as {
          apiVersion?: unknown;
          kind?: unknown;
          name?: unknown;
          uid?: unknown;
          controller?: unknown;
        }[]
      ).find((o) => o?.controller === true)
    : undefined;
  if (
    controller &&
    typeof controller.apiVersion === 'string' &&
    typeof controller.kind === 'string' &&
    typeof controller.name === 'string' &&
    OBJECT_NAME.test(controller.name)
  ) {
    return {
      apiVersion: controller.apiVersion,
      kind: controller.kind,
      name: controller.name,
      namespace,
      ...(typeof controller.uid === 'string' ? { uid: controller.uid } : {}),
    };
  }
  const { uid, name } = metadata as { uid?: unknown; name?: unknown };
  if (
    request.operation === 'UPDATE' &&
    typeof uid === 'string' &&
    typeof name === 'string' &&
    OBJECT_NAME.test(name)
  ) {
    const { group, version, kind } = request.kind;
    return { apiVersion: group ? `${group}/${version}` : version, kind, name, namespace, uid };
  }
  return { apiVersion: 'v1', kind: 'Namespace', name: namespace, namespace };
}
