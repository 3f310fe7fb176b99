// The verification records as this replica sees them: one client-node informer over the
// VerificationRecords of Signet's namespace (list, then watch), so that looking a record up during
// an admission is a map read. Every object is read strictly and authenticated with the records key
// before it is believed; what does not authenticate (anyone else wrote it, or edited or copied it)
// or does not parse is ignored, counted once per object version, and reported by the gauges.
import type { KubeApi } from '../kube/kube-api.js';
import type { ListPage } from '../kube/lists.js';
import { WatchedCollection, type WatchedObject } from '../kube/watched-collection.js';
import type { Logger } from '../logger.js';
import {
  RECORD_GROUP,
  RECORD_PLURAL,
  RECORD_VERSION,
  type ReadRecord,
  type RecordFields,
  type RecordObject,
  readRecord,
  recordAbout,
  recordName,
} from './record-format.js';
import type { RecordMetrics } from './record-metrics.js';

/** One object of the collection, read. */
export interface StoredRecord {
  readonly name: string;
  readonly resourceVersion: string;
  /** When the API server created it (epoch ms; NaN when it does not say). */
  readonly createdAt: number;
  readonly read: ReadRecord;
}

export interface RecordStoreOptions {
  readonly api: KubeApi;
  readonly namespace: string;
  /** The records key, once loaded; without it nothing authenticates. */
  readonly key: () => Buffer | undefined;
  readonly logger: Logger;
  readonly metrics: RecordMetrics;
  /** Objects kept at most (the informer's bound; a longer list leaves the records unread). */
  readonly maxObjects?: number;
}

const LIST_TIMEOUT_MS = 30_000;

export class RecordStore {
  readonly #o: RecordStoreOptions;
  readonly #watched: WatchedCollection;
  /** Reads by name, for the object version and key they were made with. */
  readonly #reads = new Map<string, { resourceVersion: string; key: Buffer; stored: StoredRecord }>();
  #sweep: NodeJS.Timeout | undefined;
  #lastError = 0;

  constructor(options: RecordStoreOptions) {
    this.#o = options;
    const { api, namespace } = options;
    const timeout = api.deadline(LIST_TIMEOUT_MS);
    this.#watched = new WatchedCollection({
      config: api.config,
      path: `/apis/${RECORD_GROUP}/${RECORD_VERSION}/namespaces/${namespace}/${RECORD_PLURAL}`,
      listPage: (token, limit) =>
        api.customObjects.listNamespacedCustomObject(
          {
            group: RECORD_GROUP,
            version: RECORD_VERSION,
            namespace,
            plural: RECORD_PLURAL,
            limit,
            ...(token ? { _continue: token } : {}),
          },
          timeout,
        ) as Promise<ListPage<WatchedObject>>,
      onChange: () => this.#scheduleSweep(),
      onError: (error) => {
        // A missing CRD or RBAC answers the same every 5 s: said once a minute.
        if (Date.now() - this.#lastError < 60_000) return;
        this.#lastError = Date.now();
        this.#o.logger.warn(
          { err: error },
          'verification records watch failed; records are not used until it lists (retrying every 5s)',
        );
      },
      maxObjects: options.maxObjects ?? 10_000,
    });
  }

  /** True once the collection was listed. */
  get listed(): boolean {
    return this.#watched.listed;
  }

  start(): void {
    this.#watched.start();
  }

  async stop(): Promise<void> {
    clearTimeout(this.#sweep);
    await this.#watched.stop();
  }

  /**
   * The record of `image` passing `policy` compiled with `fingerprint`, when there is one and it
   * authenticates and says exactly that; `undefined` otherwise (absent, forged, unparseable, or a
   * record under that name about something else).
   */
  find(policy: string, fingerprint: string, image: string): RecordFields | undefined {
    return recordAbout(this.peek(recordName(policy, fingerprint, image))?.read, policy, fingerprint, image);
  }

  /** The object of that name, read; `undefined` when there is none or no key yet. */
  peek(name: string): StoredRecord | undefined {
    const object = this.#watched.get(name, this.#o.namespace);
    return object === undefined ? undefined : this.#read(object);
  }

  /** Every object, read (the writer's and the collector's view). */
  all(): StoredRecord[] {
    return this.#watched.objects().flatMap((object) => {
      const stored = this.#read(object);
      return stored === undefined ? [] : [stored];
    });
  }

  /** How many objects the collection holds (valid or not). */
  get size(): number {
    return this.#watched.objects().length;
  }

  #read(object: WatchedObject): StoredRecord | undefined {
    const key = this.#o.key();
    if (key === undefined) return undefined;
    const metadata = (object as unknown as RecordObject).metadata ?? {};
    const name = typeof metadata.name === 'string' ? metadata.name : '';
    const resourceVersion = typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : '';
    const known = this.#reads.get(name);
    if (known !== undefined && known.resourceVersion === resourceVersion && known.key.equals(key))
      return known.stored;
    const read = readRecord(key, this.#o.namespace, object as unknown as RecordObject);
    const created =
      typeof metadata.creationTimestamp === 'string' ? Date.parse(metadata.creationTimestamp) : Number.NaN;
    const stored: StoredRecord = { name, resourceVersion, createdAt: created, read };
    if (!read.ok) {
      this.#o.metrics.rejected.inc({ reason: read.rejection });
      this.#o.logger.warn(
        { record: `${this.#o.namespace}/${name}`, reason: read.rejection, detail: read.detail },
        'ignoring a VerificationRecord Signet did not write',
      );
    }
    // Bounded by the collection: entries of objects that are gone are dropped at each sweep.
    this.#reads.set(name, { resourceVersion, key, stored });
    return stored;
  }

  #scheduleSweep(): void {
    clearTimeout(this.#sweep);
    this.#sweep = setTimeout(() => this.#sweepNow(), 1_000);
    this.#sweep.unref();
  }

  /** Reads what changed (counting what is rejected), forgets what is gone, sets the gauges. */
  #sweepNow(): void {
    const present = new Set<string>();
    let valid = 0;
    let rejected = 0;
    for (const stored of this.all()) {
      present.add(stored.name);
      if (stored.read.ok) valid++;
      else rejected++;
    }
    for (const name of this.#reads.keys()) if (!present.has(name)) this.#reads.delete(name);
    this.#o.metrics.records.set({ state: 'valid' }, valid);
    this.#o.metrics.records.set({ state: 'rejected' }, rejected);
  }
}
