// Writes verification records after the fact: a pass is queued (admission never waits for the API
// server), passes of one record are merged, and the queue is flushed 250 ms after its first pass with a few
// writes at a time. A record is created when none exists, replaced when the stored one is older
// than this pass (or is not Signet's), and left alone when another replica wrote a newer one; a
// conflict means another replica was first, which is as good. The queue is bounded; so is the
// number of records (the writer stops creating at the limit and the collector makes room).
import type { KubeApi } from '../kube/kube-api.js';
import { statusOf } from '../kube/kube-errors.js';
import type { Logger } from '../logger.js';
import {
  RECORD_GROUP,
  RECORD_PLURAL,
  RECORD_VERSION,
  type RecordFields,
  recordName,
  signedRecord,
} from './record-format.js';
import type { RecordMetrics } from './record-metrics.js';
import type { RecordStore } from './record-store.js';

export interface RecordWriterOptions {
  readonly api: KubeApi;
  readonly namespace: string;
  readonly key: () => Buffer | undefined;
  readonly store: Pick<RecordStore, 'peek' | 'size'>;
  readonly logger: Logger;
  readonly metrics: RecordMetrics;
  /** Records at most: beyond, nothing new is created (the collector deletes the oldest). */
  readonly maxRecords: number;
  /** Passes waiting to be written at most (default 1,000); more are dropped and counted. */
  readonly maxPending?: number;
  /** How long a pass waits for others to be written with it (default 250 ms). */
  readonly flushMs?: number;
  /** Writes at once (default 4). */
  readonly concurrency?: number;
}

const CALL_TIMEOUT_MS = 5_000;

export class RecordWriter {
  readonly #o: RecordWriterOptions;
  readonly #pending = new Map<string, RecordFields>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #stopped = false;
  #lastError = 0;

  constructor(options: RecordWriterOptions) {
    this.#o = options;
  }

  /** Queues a pass to be recorded; returns at once. */
  enqueue(fields: RecordFields): void {
    if (this.#stopped) return;
    const name = recordName(fields.policy, fields.fingerprint, fields.image);
    const queued = this.#pending.get(name);
    if (queued !== undefined && queued.verifiedAt >= fields.verifiedAt) return;
    if (queued === undefined && this.#pending.size >= (this.#o.maxPending ?? 1_000)) {
      this.#o.metrics.writes.inc({ result: 'dropped' });
      return;
    }
    this.#pending.set(name, fields);
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#flushing = this.flush().finally(() => {
        this.#flushing = undefined;
      });
    }, this.#o.flushMs ?? 250);
    this.#timer.unref?.();
  }

  /** How many passes wait to be written. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Writes everything queued now. */
  async flush(): Promise<void> {
    const batch = [...this.#pending.entries()];
    this.#pending.clear();
    let next = 0;
    const worker = async () => {
      for (;;) {
        const item = batch[next++];
        if (item === undefined) return;
        await this.#write(item[0], item[1]);
      }
    };
    const workers = Math.min(this.#o.concurrency ?? 4, batch.length);
    await Promise.all(Array.from({ length: workers }, worker));
  }

  /**
   * Stops taking passes and writes those queued, for at most `graceMs` (default 3 s): a shutdown
   * never waits on an API server that does not answer; what is left is dropped (and counted).
   */
  async stop(graceMs = 3_000): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
      timer.unref();
    });
    const writes = (this.#flushing ?? Promise.resolve()).then(() => this.flush());
    await Promise.race([writes, late]);
    clearTimeout(timer);
    this.#o.metrics.writes.inc({ result: 'dropped' }, this.#pending.size);
    this.#pending.clear();
  }

  async #write(name: string, fields: RecordFields): Promise<void> {
    const key = this.#o.key();
    if (key === undefined) {
      this.#o.metrics.writes.inc({ result: 'failed' });
      return;
    }
    const { api, namespace, metrics } = this.#o;
    const existing = this.#o.store.peek(name);
    const resource = { group: RECORD_GROUP, version: RECORD_VERSION, namespace, plural: RECORD_PLURAL };
    const body = signedRecord(key, namespace, fields);
    try {
      if (existing === undefined) {
        if (this.#o.store.size >= this.#o.maxRecords) {
          metrics.writes.inc({ result: 'full' });
          return;
        }
        await api.customObjects.createNamespacedCustomObject(
          { ...resource, body },
          api.deadline(CALL_TIMEOUT_MS),
        );
        metrics.writes.inc({ result: 'created' });
        return;
      }
      if (existing.read.ok && existing.read.fields.verifiedAt >= fields.verifiedAt) {
        metrics.writes.inc({ result: 'skipped' });
        return;
      }
      const metadata = body.metadata as Record<string, unknown>;
      metadata.resourceVersion = existing.resourceVersion;
      await api.customObjects.replaceNamespacedCustomObject(
        { ...resource, name, body },
        api.deadline(CALL_TIMEOUT_MS),
      );
      metrics.writes.inc({ result: 'updated' });
    } catch (error) {
      const status = statusOf(error);
      if (status === 409) {
        metrics.writes.inc({ result: 'conflict' });
        return;
      }
      // A quota of records (the chart's ResourceQuota) answers 403 when full.
      metrics.writes.inc({ result: status === 403 && /quota/i.test(String(error)) ? 'full' : 'failed' });
      if (Date.now() - this.#lastError > 60_000) {
        this.#lastError = Date.now();
        this.#o.logger.warn(
          { err: error, record: `${namespace}/${name}` },
          'cannot write a verification record',
        );
      }
    }
  }
}
