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
      await this.#api.core.createNamespacedEvent(
        {
          namespace: object.namespace ?? 'default',
          body: {
            apiVersion: 'v1',
            kind: 'Event',
            metadata: { generateName: `${object.name}.` },
            involvedObject: { ...object },
            reason,
            message: message.slice(0, 1024),
            type: 'Warning',
            source: { component: this.#component },
            firstTimestamp: now,
            lastTimestamp: now,
            count: 1,
          },
        },
        this.#api.deadline(5000),
      );
    } catch (error) {
      this.#logger.warn({ err: error, object: key }, 'could not record an Event');
    }
  }

  /** Forgets an object's last message (it became valid or was deleted). */
  clear(kind: string, name: string): void {
    this.#last.delete(`${kind}/${name}`);
  }
}
