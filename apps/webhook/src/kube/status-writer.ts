// Writes each ClusterImagePolicy's and TrustRoot's `status` (see policy/policy-status.ts) through
// the `/status` subresource. Only the replica holding the status Lease writes (a leader-only part:
// started when this replica takes the Lease, stopped when it loses it; replicas may
// briefly see different things, e.g. one fetched a remote policy and another could not, and two
// writers would undo each other's writes forever); each write is a replace carrying the
// resourceVersion it read, so a write over a newer object fails with 409 and is redone from the
// next view. Nothing is written when the stored status already says the same, nor onto a newer
// generation than the one compiled, nor onto an object policy-controller still manages.
import type { Election, Part } from '../lifecycle/part.js';
import type { Logger } from '../logger.js';
import type { SignetMetrics } from '../metrics.js';
import {
  type DesiredStatus,
  desiredStatuses,
  type StatusKind,
  statusUpdate,
} from '../policy/policy-status.js';
import type { PolicySnapshot } from '../policy/policy-store.js';
import type { KubeApi } from './kube-api.js';
import { statusOf } from './kube-errors.js';

/**
 * policy-controller's reconcilers put these finalizers on every ClusterImagePolicy and TrustRoot
 * and write their status. While one is present the object's status is policy-controller's; the
 * migration guide removes them once policy-controller is gone, and Signet's status follows.
 */
export const POLICY_CONTROLLER_FINALIZERS: ReadonlySet<string> = new Set([
  'clusterimagepolicies.policy.sigstore.dev',
  'trustroots.policy.sigstore.dev',
]);

/** An object as watched, with the collection it is served from (its status is written there). */
export interface WatchedPolicyObject {
  readonly kind: StatusKind;
  /** The resource it is watched at, where its status is written. */
  readonly resource: { readonly group: string; readonly version: string; readonly plural: string };
  readonly object: Record<string, unknown> & {
    metadata?: { name?: string; generation?: number; finalizers?: string[]; resourceVersion?: string };
    status?: unknown;
  };
}

export interface StatusWriterOptions {
  readonly api: KubeApi;
  readonly logger: Logger;
  readonly metrics: SignetMetrics;
  /** The current snapshot of the watched objects. */
  readonly objects: () => readonly WatchedPolicyObject[];
  /** The Lease that lets one replica write (`<webhook name>-policy-status`). */
  readonly election: Election;
  readonly now?: () => Date;
}

export class PolicyStatusWriter implements Part {
  readonly name = 'policy status';
  readonly leader: Election;
  readonly #options: StatusWriterOptions;
  /** This replica holds the status Lease: between `start` and `stop`. */
  #leading = false;
  #snapshot: PolicySnapshot | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  /** Objects already logged as left to policy-controller, so the line appears once per object. */
  readonly #deferred = new Set<string>();

  constructor(options: StatusWriterOptions) {
    this.#options = options;
    this.leader = options.election;
  }

  /** The Lease was taken: every status is brought in line with the snapshot. */
  start(): void {
    this.#leading = true;
    this.#options.metrics.statusLeader.set(1);
    this.reconcile();
  }

  /** The Lease was lost (or Signet stops): no more writes; resolves when the one under way is done. */
  async stop(): Promise<void> {
    this.#leading = false;
    this.#options.metrics.statusLeader.set(0);
    await this.idle();
  }

  /** A new snapshot was installed: its statuses are what the objects should say. */
  installed(snapshot: PolicySnapshot): void {
    this.#snapshot = snapshot;
    this.reconcile();
  }

  /**
   * Brings every object's status in line with the snapshot (after a watch event, a snapshot or
   * gaining the Lease). Runs one at a time; a call while one runs makes it run once more after.
   */
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

  /** Resolves when no reconcile is running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #run(): Promise<void> {
    const snapshot = this.#snapshot;
    if (snapshot === undefined || !this.#leading) return;
    const watched = new Map(
      this.#options.objects().map((w) => [`${w.kind}/${w.object.metadata?.name ?? ''}`, w] as const),
    );
    for (const desired of desiredStatuses(snapshot)) {
      if (!this.#leading) return;
      const target = watched.get(`${desired.kind}/${desired.name}`);
      if (target !== undefined) await this.#write(target, desired);
    }
  }

  async #write(target: WatchedPolicyObject, desired: DesiredStatus): Promise<void> {
    const { object, resource, kind } = target;
    const metadata = object.metadata ?? {};
    // Compiled from another generation: the snapshot of this one is on its way.
    if (desired.generation !== undefined && metadata.generation !== desired.generation) return;
    const key = `${kind}/${desired.name}`;
    const held = (metadata.finalizers ?? []).find((f) => POLICY_CONTROLLER_FINALIZERS.has(f));
    if (held !== undefined) {
      if (!this.#deferred.has(key)) {
        this.#deferred.add(key);
        this.#options.logger.info(
          { object: key, finalizer: held },
          "not writing status: policy-controller's finalizer is on it (see the migration guide)",
        );
      }
      return;
    }
    this.#deferred.delete(key);
    const status = statusUpdate(object.status, desired, this.#options.now?.() ?? new Date());
    if (status === undefined) return;
    const { metrics, logger, api } = this.#options;
    try {
      await api.customObjects.replaceClusterCustomObjectStatus(
        { ...resource, name: desired.name, body: { ...object, status } },
        api.deadline(5000),
      );
      metrics.statusWrites.inc({ kind, result: 'written' });
    } catch (error) {
      const code = statusOf(error);
      // 409: the object changed since we read it; the watch brings it and we write again. 404: gone.
      if (code === 409 || code === 404) {
        metrics.statusWrites.inc({ kind, result: 'conflict' });
        return;
      }
      metrics.statusWrites.inc({ kind, result: 'error' });
      logger.warn({ err: error, object: key }, 'could not write status');
    }
  }
}
