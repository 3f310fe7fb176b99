// A trust root that stays current: `trusted_root.json` from a TUF mirror (the public-good one,
// `--tuf-mirror`, or a `remote` TrustRoot), refreshed when the caller asks (on a schedule, off the
// admission path), with the metadata cached on disk so a rotated root stays trusted across
// restarts. Until the first refresh succeeds it serves what it can verify offline (the cache, if
// it is still valid) or the fallback it was given (the root embedded at build time); when a
// refresh fails it keeps the last good root and reports the failure.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { TrustRootError } from './errors.js';
import { type CompiledTrustRoot, type TrustRootOrigin, trustRootFromJSON } from './trusted-root.js';
import { type TufClient, tufJsClient } from './tuf-client.js';

/** Where the root in use came from. */
export type LivingRootSource = 'mirror' | 'cache' | 'fallback';

export type LivingRootEvent =
  | {
      readonly kind: 'refreshed';
      readonly name: string;
      readonly durationMs: number;
      readonly changed: boolean;
    }
  | {
      readonly kind: 'failed';
      readonly name: string;
      readonly durationMs: number;
      readonly error: TrustRootError;
      /** What stays in use: the last good root, the cache, the fallback, or nothing. */
      readonly using: LivingRootSource | 'none';
    };

export interface LivingTrustRootOptions {
  /** `public-good`, or the TrustRoot's name. */
  readonly name: string;
  readonly origin: TrustRootOrigin;
  readonly mirror: string;
  /** The trusted initial `root.json`. */
  readonly root: Buffer;
  readonly target?: string;
  /** Persistent cache; metadata goes to `<cacheDir>/<hash of mirror and root>/`. None: no cache. */
  readonly cacheDir?: string;
  /** Served until the mirror (or a valid cache) gives a root, e.g. the embedded public-good root. */
  readonly fallback?: CompiledTrustRoot;
  readonly client?: TufClient;
  /** Deadline of one refresh (default 10 s). */
  readonly timeoutMs?: number;
  readonly clock?: () => Date;
  readonly onEvent?: (event: LivingRootEvent) => void;
}

export class LivingTrustRoot {
  readonly name: string;
  readonly #options: LivingTrustRootOptions;
  readonly #metadataDir: string | undefined;
  #current: { root: CompiledTrustRoot; source: LivingRootSource; document: string } | undefined;
  #inFlight: Promise<boolean> | undefined;
  #startedFromCache = false;
  #lastError: TrustRootError | undefined;

  constructor(options: LivingTrustRootOptions) {
    this.name = options.name;
    this.#options = options;
    const key = createHash('sha256').update(options.mirror).update('\0').update(options.root).digest('hex');
    this.#metadataDir = options.cacheDir === undefined ? undefined : join(options.cacheDir, key.slice(0, 16));
    if (options.fallback !== undefined) {
      this.#current = { root: options.fallback, source: 'fallback', document: '' };
    }
  }

  /** The root to compile policies with now, or `undefined` when there is none yet. */
  get current(): CompiledTrustRoot | undefined {
    return this.#current?.root;
  }

  /** The last refresh's failure; cleared by a successful refresh. */
  get lastError(): TrustRootError | undefined {
    return this.#lastError;
  }

  /** Where {@link current} came from. */
  get source(): LivingRootSource | undefined {
    return this.#current?.source;
  }

  /**
   * Serves the cached root when the cache still verifies offline (a restart with the mirror down
   * keeps the rotated root rather than the build's). Never rejects; resolves whether it did.
   */
  async loadCache(): Promise<boolean> {
    if (this.#metadataDir === undefined || this.#startedFromCache) return false;
    this.#startedFromCache = true;
    try {
      const document = await this.#fetch(true);
      this.#install(document, 'cache');
      return true;
    } catch {
      return false;
    }
  }

  /** Fetches from the mirror now; resolves to whether the root changed. Never rejects. */
  refresh(): Promise<boolean> {
    this.#inFlight ??= this.#refreshOnce().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  async #refreshOnce(): Promise<boolean> {
    const started = performance.now();
    const emit = this.#options.onEvent;
    try {
      const document = await this.#fetch(false);
      const changed = this.#current?.document !== document;
      if (changed || this.#current?.source !== 'mirror') this.#install(document, 'mirror');
      this.#lastError = undefined;
      emit?.({ kind: 'refreshed', name: this.name, durationMs: performance.now() - started, changed });
      return changed;
    } catch (error) {
      // #fetch and #install throw only TrustRootErrors (unavailable, or an invalid document).
      const failure = error as TrustRootError;
      this.#lastError = failure;
      const using = this.#current?.source ?? 'none';
      emit?.({
        kind: 'failed',
        name: this.name,
        durationMs: performance.now() - started,
        error: failure,
        using,
      });
      return false;
    }
  }

  #install(document: string, source: LivingRootSource): void {
    const root = trustRootFromJSON(document, {
      name: this.name,
      origin: this.#options.origin,
      ...(this.#options.clock ? { clock: this.#options.clock } : {}),
    });
    this.#current = { root, source, document };
  }

  async #fetch(offline: boolean): Promise<string> {
    const timeoutMs = this.#options.timeoutMs ?? 10_000;
    const client = this.#options.client ?? tufJsClient;
    const request = {
      mirror: this.#options.mirror,
      root: this.#options.root,
      target: this.#options.target ?? 'trusted_root.json',
      timeoutMs,
      ...(this.#metadataDir === undefined ? {} : { metadataDir: this.#metadataDir }),
      ...(offline ? { offline: true } : {}),
    };
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([client(request), deadline]);
    } catch (error) {
      throw new TrustRootError(
        'TRUST_ROOT_UNAVAILABLE',
        this.name,
        `cannot load ${request.target} from ${offline ? 'the cache' : this.#options.mirror}`,
        { cause: error },
      );
    } finally {
      clearTimeout(timer);
    }
  }
}
