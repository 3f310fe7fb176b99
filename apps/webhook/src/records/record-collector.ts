// Garbage collection of verification records, by the replica holding the status Lease (one
// collector per cluster; a leader-only part, ADR 0023: being started is holding the Lease): records older than they can ever be used (the longest grace period in
// force, and at least the cache TTL) go, then the oldest beyond the limit, down to 90% of it so that
// new passes can be written, and objects that are not Signet's (they admit nothing anyway) once
// they are 10 minutes old (time for every replica to have read a replaced key). Each delete carries
// the resourceVersion read: a record refreshed meanwhile is kept.
import type { KubeApi } from '../kube/kube-api.js';
import { statusOf } from '../kube/kube-errors.js';
import type { Election, Part } from '../lifecycle/part.js';
import type { Logger } from '../logger.js';
import { RECORD_GROUP, RECORD_PLURAL, RECORD_VERSION } from './record-format.js';
import type { RecordMetrics } from './record-metrics.js';
import type { RecordStore, StoredRecord } from './record-store.js';

export interface RecordCollectorOptions {
  readonly api: KubeApi;
  readonly namespace: string;
  readonly store: Pick<RecordStore, 'all' | 'listed'>;
  readonly logger: Logger;
  readonly metrics: RecordMetrics;
  /** The Lease whose holder collects (the policy status Lease). */
  readonly election: Election;
  /** How old a record may become before it is of no use (read at every sweep: policies change). */
  readonly maxAgeMs: () => number;
  readonly maxRecords: number;
  /** Default 5 minutes. */
  readonly intervalMs?: number;
  /** Deletes per sweep at most (default 1,000), a few at a time. */
  readonly maxDeletes?: number;
  readonly now?: () => number;
}

/** A rejected object is left this long before it is deleted (a key being replaced). */
const REJECTED_GRACE_MS = 10 * 60_000;
const CALL_TIMEOUT_MS = 5_000;

export type CollectReason = 'expired' | 'over-limit' | 'rejected';

export class RecordCollector implements Part {
  readonly name = 'verification record collection';
  readonly leader: Election;
  readonly #o: RecordCollectorOptions;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(options: RecordCollectorOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.leader = options.election;
  }

  /** Sweeps every interval until `signal` aborts (the Lease lost, or Signet stopping). */
  start(signal: AbortSignal): void {
    const tick = () => {
      this.#running = this.sweep(signal)
        .then(() => undefined)
        .catch((error: unknown) => this.#o.logger.warn({ err: error }, 'verification records sweep failed'))
        .finally(() => {
          this.#running = undefined;
        });
    };
    this.#timer = setInterval(tick, this.#o.intervalMs ?? 300_000);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }

  /** What a sweep would delete now, and why (oldest first within each reason). */
  plan(): { readonly record: StoredRecord; readonly reason: CollectReason }[] {
    const now = this.#now();
    const maxAge = this.#o.maxAgeMs();
    const doomed: { record: StoredRecord; reason: CollectReason }[] = [];
    const kept: { record: StoredRecord; verifiedAt: number }[] = [];
    for (const record of this.#o.store.all()) {
      if (!record.read.ok) {
        if (!(now - record.createdAt < REJECTED_GRACE_MS)) doomed.push({ record, reason: 'rejected' });
        continue;
      }
      const { verifiedAt } = record.read.fields;
      if (now - verifiedAt > maxAge) doomed.push({ record, reason: 'expired' });
      else kept.push({ record, verifiedAt });
    }
    if (kept.length > this.#o.maxRecords) {
      kept.sort((a, b) => a.verifiedAt - b.verifiedAt);
      const target = Math.floor(this.#o.maxRecords * 0.9);
      for (const { record } of kept.slice(0, kept.length - target))
        doomed.push({ record, reason: 'over-limit' });
    }
    return doomed;
  }

  /** One pass, once the records were listed; it ends early when `signal` aborts (the Lease lost). */
  async sweep(signal?: AbortSignal): Promise<number> {
    if (signal?.aborted === true || !this.#o.store.listed) return 0;
    const doomed = this.plan().slice(0, this.#o.maxDeletes ?? 1_000);
    let next = 0;
    let deleted = 0;
    const worker = async () => {
      for (;;) {
        const item = doomed[next++];
        if (item === undefined || signal?.aborted === true) return;
        if (await this.#delete(item.record)) {
          deleted++;
          this.#o.metrics.collected.inc({ reason: item.reason });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(4, doomed.length) }, worker));
    if (deleted > 0) this.#o.logger.info({ deleted }, 'verification records collected');
    return deleted;
  }

  async #delete(record: StoredRecord): Promise<boolean> {
    const { api, namespace } = this.#o;
    try {
      await api.customObjects.deleteNamespacedCustomObject(
        {
          group: RECORD_GROUP,
          version: RECORD_VERSION,
          namespace,
          plural: RECORD_PLURAL,
          name: record.name,
          body: { preconditions: { resourceVersion: record.resourceVersion } },
        },
        api.deadline(CALL_TIMEOUT_MS),
      );
      return true;
    } catch (error) {
      // Gone already, or refreshed since it was read: nothing to do.
      const status = statusOf(error);
      if (status === 404 || status === 409) return false;
      throw error;
    }
  }
}
