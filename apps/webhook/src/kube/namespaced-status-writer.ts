// Writes each namespace's ImagePolicy and ImagePolicyException `status` (policy/namespaced-status.ts)
// through their `/status` subresource, as PolicyStatusWriter does for ClusterImagePolicies: on the
// replica holding the policy-status Lease only (a leader-only part on the same Lease), a replace
// carrying the resourceVersion it read, nothing when the stored status says the same or the
// object is of another generation than the one compiled. An exception's condition changes when it
// expires, with no change to any object: a timer brings the writer back at the next expiry, so
// `kubectl get imagepolicyexceptions` says Expired at once.
import type { Election, Part } from '../lifecycle/part.js';
import type { Logger } from '../logger.js';
import type { SignetMetrics } from '../metrics.js';
import {
  type NamespacedStatus,
  namespacedStatuses,
  nextExceptionExpiry,
} from '../policy/namespaced-status.js';
import { statusUpdate } from '../policy/policy-status.js';
import type { PolicySnapshot } from '../policy/policy-store.js';
import type { WatchedNamespacedObject } from './cluster-source.js';
import type { KubeApi } from './kube-api.js';
import { statusOf } from './kube-errors.js';

export interface NamespacedStatusWriterOptions {
  readonly api: KubeApi;
  readonly logger: Logger;
  readonly metrics: SignetMetrics;
  /** The ImagePolicies and exceptions as watched now. */
  readonly objects: () => readonly WatchedNamespacedObject[];
  /** The policy-status Lease (shared with the ClusterImagePolicies' writer). */
  readonly election: Election;
  readonly now?: () => number;
}

/** The longest a timer is set for (Node's timers hold at most about 24.8 days). */
const MAX_TIMER_MS = 24 * 60 * 60 * 1000;
/** Past the expiry, so that the condition is computed on the far side of it. */
const EXPIRY_MARGIN_MS = 100;

export class NamespacedStatusWriter implements Part {
  readonly name = 'namespaced policy status';
  readonly leader: Election;
  readonly #options: NamespacedStatusWriterOptions;
  readonly #now: () => number;
  #leading = false;
  #snapshot: PolicySnapshot | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #expiry: NodeJS.Timeout | undefined;

  constructor(options: NamespacedStatusWriterOptions) {
    this.#options = options;
    this.leader = options.election;
    this.#now = options.now ?? Date.now;
  }

  start(): void {
    this.#leading = true;
    this.reconcile();
  }

  async stop(): Promise<void> {
    this.#leading = false;
    clearTimeout(this.#expiry);
    await this.idle();
  }

  /** A new snapshot was installed. */
  installed(snapshot: PolicySnapshot): void {
    this.#snapshot = snapshot;
    this.reconcile();
  }

  /** Brings every status in line (one run at a time; a call meanwhile runs it once more after). */
  reconcile(): void {
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#run().finally(() => {
      this.#running = undefined;
      if (this.#again) {
        this.#again = false;
        this.reconcile();
      }
    });
  }

  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #run(): Promise<void> {
    const snapshot = this.#snapshot;
    if (snapshot === undefined || !this.#leading) return;
    const now = this.#now();
    this.#scheduleExpiry(snapshot, now);
    const watched = new Map(
      this.#options
        .objects()
        .map((w) => [keyOf(w.kind, w.object.metadata?.namespace, w.object.metadata?.name), w]),
    );
    for (const desired of namespacedStatuses(snapshot, now)) {
      if (!this.#leading) return;
      const target = watched.get(keyOf(desired.kind, desired.namespace, desired.name));
      if (target !== undefined) await this.#write(target, desired);
    }
  }

  #scheduleExpiry(snapshot: PolicySnapshot, now: number): void {
    clearTimeout(this.#expiry);
    const next = nextExceptionExpiry(snapshot, now);
    if (next === undefined) return;
    const delay = Math.min(next - now + EXPIRY_MARGIN_MS, MAX_TIMER_MS);
    this.#expiry = setTimeout(() => this.reconcile(), Math.max(0, delay));
    this.#expiry.unref();
  }

  async #write(target: WatchedNamespacedObject, desired: NamespacedStatus): Promise<void> {
    const { object, resource, kind } = target;
    const metadata = object.metadata ?? {};
    if (desired.generation !== undefined && metadata.generation !== desired.generation) return;
    const status = statusUpdate(object.status, desired, new Date(this.#now()));
    if (status === undefined) return;
    const { metrics, logger, api } = this.#options;
    const { namespace, name } = desired;
    try {
      await api.customObjects.replaceNamespacedCustomObjectStatus(
        { ...resource, namespace, name, body: { ...object, status } },
        api.deadline(5000),
      );
      metrics.statusWrites.inc({ kind, result: 'written' });
    } catch (error) {
      const code = statusOf(error);
      // 409: changed since it was read (the watch brings it, and it is written again); 404: gone.
      if (code === 409 || code === 404) {
        metrics.statusWrites.inc({ kind, result: 'conflict' });
        return;
      }
      metrics.statusWrites.inc({ kind, result: 'error' });
      logger.warn({ err: error, object: `${kind}/${namespace}/${name}` }, 'could not write status');
    }
  }
}

function keyOf(kind: string, namespace: string | undefined, name: string | undefined): string {
  return `${kind}/${namespace ?? ''}/${name ?? ''}`;
}
