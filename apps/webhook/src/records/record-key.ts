// The HMAC key of the verification records: 32 random bytes in a Secret of Signet's namespace,
// created by the first replica that finds none (another replica creating it at the same moment
// wins, and this one reads theirs), read again every minute so that a replaced key (the operator
// deleted the Secret to rotate it) reaches every replica. Until a key is loaded, no record is read
// or written. The key is never logged: only a digest of it, to tell keys apart.
import { createHash, randomBytes } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import type { KubeApi } from '../kube/kube-api.js';
import { statusOf } from '../kube/kube-errors.js';
import type { Logger } from '../logger.js';

const KEY_FIELD = 'hmac-key';
const CALL_TIMEOUT_MS = 5_000;
const MIN_KEY_BYTES = 32;

export interface RecordKeyOptions {
  readonly api: KubeApi;
  readonly namespace: string;
  readonly secretName: string;
  readonly logger: Logger;
  /** How often the Secret is read again (default 60 s; 5 s while no key could be loaded). */
  readonly refreshMs?: number;
}

export class RecordKey {
  readonly #o: RecordKeyOptions;
  #key: Buffer | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: RecordKeyOptions) {
    this.#o = options;
  }

  /** The key, once loaded. */
  get current(): Buffer | undefined {
    return this.#key;
  }

  /** Loads (or creates) the key in the background and keeps reading it. */
  start(): void {
    void this.#refresh();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  async #refresh(): Promise<void> {
    try {
      const key = (await this.#read()) ?? (await this.#create());
      if (this.#key === undefined || !this.#key.equals(key)) {
        this.#o.logger.info(
          { secret: `${this.#o.namespace}/${this.#o.secretName}`, keyId: keyId(key) },
          this.#key === undefined ? 'verification records key loaded' : 'verification records key replaced',
        );
      }
      this.#key = key;
    } catch (error) {
      this.#o.logger.error(
        { err: error, secret: `${this.#o.namespace}/${this.#o.secretName}` },
        'cannot load the verification records key; records are neither read nor written until it loads',
      );
    }
    if (this.#stopped) return;
    const delay = this.#key === undefined ? 5_000 : (this.#o.refreshMs ?? 60_000);
    this.#timer = setTimeout(() => void this.#refresh(), delay);
    this.#timer.unref();
  }

  /** The stored key; `undefined` when there is no Secret. A Secret without a usable key is an error. */
  async #read(): Promise<Buffer | undefined> {
    const { api, namespace, secretName: name } = this.#o;
    let secret: V1Secret;
    try {
      secret = await api.core.readNamespacedSecret({ name, namespace }, api.deadline(CALL_TIMEOUT_MS));
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
    const encoded = secret.data?.[KEY_FIELD];
    const key = encoded === undefined ? Buffer.alloc(0) : Buffer.from(encoded, 'base64');
    if (key.length < MIN_KEY_BYTES) {
      throw new Error(`Secret ${namespace}/${name} has no ${KEY_FIELD} of at least ${MIN_KEY_BYTES} bytes`);
    }
    return key;
  }

  async #create(): Promise<Buffer> {
    const { api, namespace, secretName: name } = this.#o;
    const key = randomBytes(MIN_KEY_BYTES);
    const body: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace, labels: { 'app.kubernetes.io/name': 'signet' } },
      type: 'Opaque',
      data: { [KEY_FIELD]: key.toString('base64') },
    };
    try {
      await api.core.createNamespacedSecret({ namespace, body }, api.deadline(CALL_TIMEOUT_MS));
      return key;
    } catch (error) {
      // Another replica created it first: use theirs.
      if (statusOf(error) === 409) {
        const theirs = await this.#read();
        if (theirs !== undefined) return theirs;
      }
      throw error;
    }
  }
}

/** A short digest of a key: enough to tell two keys apart in a log, nothing about the key. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update('signet records key id\n').update(key).digest('hex').slice(0, 12);
}
