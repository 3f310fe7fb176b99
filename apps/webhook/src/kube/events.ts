import type { Logger } from '../logger.js';
import type { KubeApi } from './kube-api.js';

export interface InvolvedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  /** A namespaced object's (an ImagePolicy's): its Events go there. */
  readonly namespace?: string;
  readonly uid?: string;
}

/** One Warning Event as Signet writes them: on `involved`, in `namespace`, said once at `at`. */
export interface WarningEvent {
  readonly namespace: string;
  readonly involved: InvolvedObject;
  readonly reason: string;
  /** Cut to 1,024 characters (the API server refuses longer ones). */
  readonly message: string;
  /** `source.component`: `signet`, or `signet-audit` for the background scan. */
  readonly component: string;
  readonly at: Date;
}

/** Creates a Warning Event, within 5 s; rejects as the API call does (callers log and go on). */
export async function createWarningEvent(api: KubeApi, event: WarningEvent): Promise<void> {
  await api.core.createNamespacedEvent(
    {
      namespace: event.namespace,
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { generateName: `${event.involved.name}.`, namespace: event.namespace },
        involvedObject: { ...event.involved },
        reason: event.reason,
        message: event.message.slice(0, 1024),
        type: 'Warning',
        source: { component: event.component },
        firstTimestamp: event.at,
        lastTimestamp: event.at,
        count: 1,
      },
    },
    api.deadline(5000),
  );
}

/**
 * Reports problems with policy objects as Kubernetes Events on the object (`kubectl describe cip
 * NAME` shows them). Events of cluster-scoped objects live in `default`, those of an ImagePolicy
 * or exception in its namespace. The same message for the same object is reported once until it
 * changes (at most 1,000 objects remembered).
 */
export class PolicyEventRecorder {
  readonly #api: KubeApi;
  readonly #logger: Logger;
  readonly #component: string;
  readonly #last = new Map<string, string>();

  constructor(api: KubeApi, logger: Logger, component = 'signet') {
    this.#api = api;
    this.#logger = logger;
    this.#component = component;
  }

  /** Records a Warning event unless the same message was already recorded for this object. */
  async warn(object: InvolvedObject, reason: string, message: string): Promise<void> {
    const key = `${object.kind}/${object.namespace === undefined ? '' : `${object.namespace}/`}${object.name}`;
    if (this.#last.get(key) === message) return;
    if (this.#last.size >= 1000) this.#last.clear();
    this.#last.set(key, message);
    const now = new Date();
    try {
      await createWarningEvent(this.#api, {
        namespace: object.namespace ?? 'default',
        involved: object,
        reason,
        message,
        component: this.#component,
        at: now,
      });
    } catch (error) {
      this.#logger.warn({ err: error, object: key }, 'could not record an Event');
    }
  }

  /** Forgets an object's last message (it became valid or was deleted). */
  clear(kind: string, name: string): void {
    this.#last.delete(`${kind}/${name}`);
  }
}
