// A Warning Event on the owner of each Pod admitted on a verification record (stale-if-error), so
// that `kubectl describe` of the ReplicaSet (or StatefulSet, Job, ...) says its Pods were admitted
// without the registry, on a record how old. One Event per owner, image and policy per 10 minutes
// (a drain of 100 replicas is not 100 Events), at most 4 writes at once and 256 waiting; the
// admission never waits for them.
import { createWarningEvent } from '../kube/events.js';
import type { KubeApi } from '../kube/kube-api.js';
import type { Logger } from '../logger.js';

export const GRACE_EVENT_REASON = 'AdmittedOnVerificationRecord';

export interface GraceEvent {
  readonly namespace: string;
  readonly owner: {
    readonly apiVersion: string;
    readonly kind: string;
    readonly name: string;
    readonly uid?: string;
  };
  readonly message: string;
  /** What makes two Events the same: owner, image and policy. */
  readonly key: string;
}

const REPEAT_AFTER_MS = 10 * 60_000;
const MAX_REMEMBERED = 4_096;
const MAX_WAITING = 256;

export class GraceEvents {
  readonly #api: KubeApi;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #sent = new Map<string, number>();
  readonly #waiting: GraceEvent[] = [];
  #writing = 0;

  constructor(api: KubeApi, logger: Logger, now: () => number = Date.now) {
    this.#api = api;
    this.#logger = logger;
    this.#now = now;
  }

  /** Queues the Event unless the same one was sent in the last 10 minutes; returns at once. */
  record(event: GraceEvent): void {
    const now = this.#now();
    const last = this.#sent.get(event.key);
    if (last !== undefined && now - last < REPEAT_AFTER_MS) return;
    if (this.#waiting.length >= MAX_WAITING) return;
    this.#sent.delete(event.key);
    this.#sent.set(event.key, now);
    while (this.#sent.size > MAX_REMEMBERED) this.#sent.delete(this.#sent.keys().next().value as string);
    this.#waiting.push(event);
    this.#drain();
  }

  #drain(): void {
    while (this.#writing < 4) {
      const event = this.#waiting.shift();
      if (event === undefined) return;
      this.#writing++;
      void this.#write(event).finally(() => {
        this.#writing--;
        this.#drain();
      });
    }
  }

  async #write(event: GraceEvent): Promise<void> {
    const at = new Date(this.#now());
    try {
      await createWarningEvent(this.#api, {
        namespace: event.namespace,
        involved: { ...event.owner, namespace: event.namespace },
        reason: GRACE_EVENT_REASON,
        message: event.message,
        component: 'signet',
        at,
      });
    } catch (error) {
      this.#logger.warn(
        { err: error, owner: `${event.owner.kind}/${event.owner.name}` },
        'could not record an Event',
      );
    }
  }
}
