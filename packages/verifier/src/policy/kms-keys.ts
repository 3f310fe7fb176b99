// Public keys held in a KMS (`key.kms: awskms://...`), kept for the policy compiler. A key is
// fetched when a policy that names it is compiled, kept, and fetched again only when it is older
// than the refresh interval (the caller refreshes on a schedule and recompiles when a key
// changed): admissions never wait for a KMS. When a KMS cannot be reached, the last key it gave is
// kept and the failure is reported through `onEvent`, so an outage neither opens nor closes the
// gate on its own. How keys are fetched (the cloud SDKs) is injected: see `@signet/kms`.

/** A public key as a KMS gives it, with the digest its signatures use when the KMS says. */
export interface KmsPublicKey {
  /** PEM `PUBLIC KEY` (SPKI). */
  readonly pem: string;
  /** `sha256`, `sha384` or `sha512` when the key's algorithm fixes it (P-384 keys: `sha384`). */
  readonly hashAlgorithm?: string | undefined;
}

/**
 * Fetches one key by its cosign URI. Must honour `signal` (the store's per-fetch timeout). May
 * carry `check`: it decides without any I/O whether a URI is one the fetcher will never fetch (a
 * malformed URI, an endpoint the operator did not allow), throwing a coded error that says why;
 * such a key is `refused` (a policy naming it does not compile) and never fetched.
 */
export type KmsKeyFetcher = ((uri: string, signal: AbortSignal) => Promise<KmsPublicKey>) & {
  readonly check?: (uri: string) => void;
};

/** What the store did, for logs and metrics. */
export type KmsKeyEvent =
  | { readonly kind: 'fetched'; readonly uri: string; readonly durationMs: number; readonly changed: boolean }
  | {
      readonly kind: 'failed';
      readonly uri: string;
      readonly durationMs: number;
      readonly error: Error;
      /** When the key still in use was fetched; `undefined` when there is none. */
      readonly lastGoodAt: Date | undefined;
    };

export type KmsKeyLookup =
  | {
      readonly kind: 'ready';
      readonly key: KmsPublicKey;
      readonly fetchedAt: Date;
      /** Set when the last refresh failed and this is the last good key. */
      readonly stale: Error | undefined;
    }
  | { readonly kind: 'unavailable'; readonly error: Error }
  /** The fetcher's `check` refused the URI: nothing was (or will be) fetched. */
  | { readonly kind: 'refused'; readonly error: Error };

/** What the policy compiler needs from a KMS key store. */
export interface KmsKeySource {
  lookup(uri: string): Promise<KmsKeyLookup>;
  /** Throws an Error saying why when `uri` is not a KMS key URI of a supported form; fetches nothing. */
  checkUri?(uri: string): void;
}

export interface KmsKeyStoreOptions {
  readonly fetcher: KmsKeyFetcher;
  /** Throws when a URI is not of a form `fetcher` reads (`parseKmsUri` of @signet/kms); none: any. */
  readonly checkUri?: (uri: string) => void;
  /** A key older than this is fetched again by `lookup` and `refresh` (default 5 minutes). */
  readonly refreshIntervalMs?: number;
  /** Deadline of one fetch (default 10 s). */
  readonly timeoutMs?: number;
  /** How many distinct URIs are kept (default 256); the least recently used go first. */
  readonly maxKeys?: number;
  readonly clock?: () => Date;
  readonly onEvent?: (event: KmsKeyEvent) => void;
}

interface Entry {
  good: { key: KmsPublicKey; fetchedAt: Date } | undefined;
  /** The last fetch's failure, cleared by a success. */
  failure: Error | undefined;
  attemptedAt: Date;
  inFlight: Promise<void> | undefined;
}

export class KmsKeyError extends Error {
  override readonly name = 'KmsKeyError';
  readonly uri: string;
  constructor(uri: string, message: string, options?: ErrorOptions) {
    super(`KMS key ${uri}: ${message}`, options);
    this.uri = uri;
  }
}

const DEFAULT_REFRESH_MS = 5 * 60_000;
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_KEYS = 256;

export class KmsKeyStore implements KmsKeySource {
  readonly #fetcher: KmsKeyFetcher;
  readonly #checkUri: ((uri: string) => void) | undefined;
  readonly #refreshMs: number;
  readonly #timeoutMs: number;
  readonly #maxKeys: number;
  readonly #clock: () => Date;
  readonly #onEvent: ((event: KmsKeyEvent) => void) | undefined;
  readonly #entries = new Map<string, Entry>();

  constructor(options: KmsKeyStoreOptions) {
    this.#fetcher = options.fetcher;
    this.#checkUri = options.checkUri;
    this.#refreshMs = options.refreshIntervalMs ?? DEFAULT_REFRESH_MS;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
    this.#clock = options.clock ?? (() => new Date());
    this.#onEvent = options.onEvent;
  }

  get refreshIntervalMs(): number {
    return this.#refreshMs;
  }

  /** Checks `uri`'s form, without fetching or remembering anything. */
  checkUri(uri: string): void {
    this.#checkUri?.(uri);
  }

  /** The URIs known to the store, most recently used last. */
  uris(): string[] {
    return [...this.#entries.keys()];
  }

  /** The key of `uri`: kept if younger than the refresh interval, else fetched (last good kept on failure). */
  async lookup(uri: string): Promise<KmsKeyLookup> {
    try {
      this.#fetcher.check?.(uri);
    } catch (error) {
      return { kind: 'refused', error: error instanceof Error ? error : new KmsKeyError(uri, String(error)) };
    }
    const entry = this.#touch(uri);
    if (this.#due(entry)) await this.#fetch(uri, entry);
    return this.#result(uri, entry);
  }

  /**
   * Fetches every known key that is due (all of them with `force`). Resolves to whether any key
   * changed, so the caller knows to recompile the policies; never rejects.
   */
  async refresh(options: { readonly force?: boolean } = {}): Promise<boolean> {
    const entries = [...this.#entries];
    const before = entries.map(([, entry]) => entry.good?.key.pem);
    await Promise.all(
      entries
        .filter(([, entry]) => options.force === true || this.#due(entry))
        .map(([uri, entry]) => this.#fetch(uri, entry)),
    );
    return entries.some(([, entry], i) => entry.good?.key.pem !== before[i]);
  }

  /** Forgets keys no compiled policy names any more. */
  retain(uris: Iterable<string>): void {
    const keep = new Set(uris);
    for (const uri of [...this.#entries.keys()]) if (!keep.has(uri)) this.#entries.delete(uri);
  }

  #touch(uri: string): Entry {
    let entry = this.#entries.get(uri);
    if (entry !== undefined) {
      this.#entries.delete(uri);
    } else {
      entry = { good: undefined, failure: undefined, attemptedAt: new Date(0), inFlight: undefined };
    }
    this.#entries.set(uri, entry);
    // Least recently used first: a Map iterates in insertion order, and a lookup re-inserts.
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#maxKeys) break;
      this.#entries.delete(oldest);
    }
    return entry;
  }

  #due(entry: Entry): boolean {
    return this.#clock().getTime() - entry.attemptedAt.getTime() >= this.#refreshMs;
  }

  #fetch(uri: string, entry: Entry): Promise<void> {
    entry.inFlight ??= this.#fetchOnce(uri, entry).finally(() => {
      entry.inFlight = undefined;
    });
    return entry.inFlight;
  }

  async #fetchOnce(uri: string, entry: Entry): Promise<void> {
    const started = performance.now();
    entry.attemptedAt = this.#clock();
    const signal = AbortSignal.timeout(this.#timeoutMs);
    try {
      const key = await raceSignal(this.#fetcher(uri, signal), signal, this.#timeoutMs);
      if (typeof key?.pem !== 'string' || key.pem === '') throw new Error('the KMS returned no public key');
      const changed = entry.good !== undefined && entry.good.key.pem !== key.pem;
      entry.good = { key, fetchedAt: this.#clock() };
      entry.failure = undefined;
      this.#onEvent?.({ kind: 'fetched', uri, durationMs: performance.now() - started, changed });
    } catch (error) {
      const failure = new KmsKeyError(uri, `cannot fetch the public key: ${messageOf(error)}`, {
        cause: error,
      });
      entry.failure = failure;
      this.#onEvent?.({
        kind: 'failed',
        uri,
        durationMs: performance.now() - started,
        error: failure,
        lastGoodAt: entry.good?.fetchedAt,
      });
    }
  }

  #result(uri: string, entry: Entry): KmsKeyLookup {
    if (entry.good !== undefined) {
      return { kind: 'ready', key: entry.good.key, fetchedAt: entry.good.fetchedAt, stale: entry.failure };
    }
    return { kind: 'unavailable', error: entry.failure ?? new KmsKeyError(uri, 'not fetched yet') };
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A fetcher that ignores its signal still cannot hold the compiler past the deadline. */
function raceSignal<T>(promise: Promise<T>, signal: AbortSignal, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error(`no answer within ${timeoutMs} ms`));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
