// A trust root that stays current: `trusted_root.json` from a TUF mirror (the public-good one,
// `--tuf-mirror`, or a `remote` TrustRoot), refreshed when the caller asks (on a schedule, off the
// admission path), with the verified metadata kept in a cache on disk so a rotated root stays
// trusted across restarts. Until the first refresh succeeds it serves what it can verify offline
// (the cache, if it is still valid) or the fallback it was given (the root embedded at build
// time); when a refresh fails it keeps the last good root and reports the failure, but never past
// the expiry of the metadata that root was verified with: a frozen mirror (one that keeps serving
// metadata that has expired) leaves the fallback, or nothing, and says so.
import { createHash } from 'node:crypto';
import { TrustRootError } from './errors.js';
import { type CompiledTrustRoot, type TrustRootOrigin, trustRootFromJSON } from './trusted-root.js';
import type { TufMetadataCache } from './tuf-cache.js';
import {
  httpFiles,
  type TufClient,
  type TufFileSource,
  type TufRequest,
  type TufResult,
  TufUpdateError,
  tufJsClient,
} from './tuf-client.js';

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
      /** The mirror's metadata had expired (a frozen mirror). */
      readonly expired: boolean;
    };

export interface LivingTrustRootOptions {
  /** `public-good`, or the TrustRoot's name. */
  readonly name: string;
  readonly origin: TrustRootOrigin;
  readonly mirror: string;
  /** The trusted initial `root.json`. */
  readonly root: Buffer;
  readonly target?: string;
  /** Where verified metadata is kept across restarts (under {@link LivingTrustRoot.cacheKey}). None: no cache. */
  readonly cache?: TufMetadataCache;
  /** Served until the mirror (or a valid cache) gives a root, e.g. the embedded public-good root. */
  readonly fallback?: CompiledTrustRoot;
  readonly client?: TufClient;
  /** How the mirror's files are read (default: HTTP(S) to a mirror the operator chose). */
  readonly files?: TufFileSource;
  /** Runs each fetch (a limit on how many run at once); default: at once. */
  readonly queue?: <T>(task: () => Promise<T>) => Promise<T>;
  /** Deadline of one refresh (default 10 s). */
  readonly timeoutMs?: number;
  /** Now, for loaded-at times and expiry. */
  readonly clock?: () => Date;
  readonly onEvent?: (event: LivingRootEvent) => void;
}

interface Current {
  readonly root: CompiledTrustRoot;
  readonly source: LivingRootSource;
  readonly document: string;
  /** When the metadata it was verified with expires (none for the fallback). */
  readonly expires: Date | undefined;
}

export class LivingTrustRoot {
  readonly name: string;
  readonly #options: LivingTrustRootOptions;
  readonly #cacheKey: string;
  readonly #fallback: Current | undefined;
  readonly #files: TufFileSource;
  #current: Current | undefined;
  #inFlight: Promise<boolean> | undefined;
  #startedFromCache = false;
  #lastError: TrustRootError | undefined;
  #lastAttempt = 0;

  /** The cache key of a root: its mirror, initial root and (when not the default) target. */
  static cacheKey(spec: {
    readonly mirror: string;
    readonly root: Buffer;
    readonly target?: string;
  }): string {
    const hash = createHash('sha256').update(spec.mirror).update('\0').update(spec.root);
    if (spec.target !== undefined && spec.target !== 'trusted_root.json')
      hash.update('\0').update(spec.target);
    return hash.digest('hex').slice(0, 16);
  }

  constructor(options: LivingTrustRootOptions) {
    this.name = options.name;
    this.#options = options;
    this.#cacheKey = LivingTrustRoot.cacheKey(options);
    this.#files = options.files ?? httpFiles({ chosenBy: 'operator' });
    if (options.fallback !== undefined) {
      this.#fallback = { root: options.fallback, source: 'fallback', document: '', expires: undefined };
      this.#current = this.#fallback;
    }
  }

  /** The root to compile policies with now, or `undefined` when there is none (yet, or any more). */
  get current(): CompiledTrustRoot | undefined {
    return this.#valid()?.root;
  }

  /** The last refresh's failure; cleared by a successful refresh. */
  get lastError(): TrustRootError | undefined {
    return this.#lastError;
  }

  /** Where {@link current} came from. */
  get source(): LivingRootSource | undefined {
    return this.#valid()?.source;
  }

  /** When the metadata {@link current} was verified with expires (`undefined` for none, or the fallback). */
  get expiresAt(): Date | undefined {
    return this.#valid()?.expires;
  }

  /** When the last refresh started (ms since the epoch, by the clock); 0 before any. */
  get lastAttemptAt(): number {
    return this.#lastAttempt;
  }

  /**
   * Serves the cached root when the cache still verifies offline (a restart with the mirror down
   * keeps the rotated root rather than the build's). Never rejects; resolves whether it did.
   */
  async loadCache(): Promise<boolean> {
    const cache = this.#options.cache;
    if (cache === undefined || this.#startedFromCache) return false;
    this.#startedFromCache = true;
    const cached = await cache.read(this.#cacheKey);
    if (cached === undefined) return false;
    try {
      const result = await this.#fetch(cached, true);
      this.#install(result, 'cache');
      return true;
    } catch {
      return false;
    }
  }

  /** Fetches from the mirror now; resolves to whether the root in use changed. Never rejects. */
  refresh(): Promise<boolean> {
    this.#inFlight ??= this.#refreshOnce().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  async #refreshOnce(): Promise<boolean> {
    const started = performance.now();
    this.#lastAttempt = this.#now().getTime();
    const emit = this.#options.onEvent;
    const before = this.#valid();
    try {
      const cached = await this.#options.cache?.read(this.#cacheKey);
      const result = await this.#fetch(cached, false);
      const changed = before?.document !== result.content;
      this.#install(result, 'mirror');
      await this.#options.cache?.write(this.#cacheKey, result.verified);
      this.#lastError = undefined;
      emit?.({ kind: 'refreshed', name: this.name, durationMs: performance.now() - started, changed });
      return changed;
    } catch (error) {
      // #fetch and #install throw only TrustRootErrors (unavailable, or an invalid document).
      const failure = error as TrustRootError;
      this.#lastError = failure;
      // The root kept may have expired since it was installed: no longer in use, which is a
      // change (the caller recompiles, and what needed it fails as unavailable).
      const valid = this.#valid();
      const dropped = valid !== this.#current;
      this.#current = valid;
      emit?.({
        kind: 'failed',
        name: this.name,
        durationMs: performance.now() - started,
        error: failure,
        using: valid?.source ?? 'none',
        expired: failure.cause instanceof TufUpdateError && failure.cause.reason === 'expired',
      });
      return dropped;
    }
  }

  /** The current root, unless the metadata it was verified with has expired (then the fallback). */
  #valid(): Current | undefined {
    const current = this.#current;
    if (current?.expires === undefined || current.expires.getTime() > this.#now().getTime()) return current;
    return this.#fallback;
  }

  #install(result: TufResult, source: LivingRootSource): void {
    const root = trustRootFromJSON(result.content, {
      name: this.name,
      origin: this.#options.origin,
      ...(this.#options.clock ? { clock: this.#options.clock } : {}),
    });
    this.#current = { root, source, document: result.content, expires: result.expires };
  }

  async #fetch(cached: ReadonlyMap<string, Buffer> | undefined, offline: boolean): Promise<TufResult> {
    const timeoutMs = this.#options.timeoutMs ?? 10_000;
    const client = this.#options.client ?? tufJsClient;
    const target = this.#options.target ?? 'trusted_root.json';
    const run = this.#options.queue ?? ((task) => task());
    return run(async () => {
      const controller = new AbortController();
      const request: TufRequest = {
        mirror: this.#options.mirror,
        root: this.#options.root,
        target,
        timeoutMs,
        files: this.#files,
        signal: controller.signal,
        ...(cached === undefined ? {} : { cached }),
        ...(offline ? { offline: true } : {}),
      };
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const late = new Error(`no answer within ${timeoutMs} ms`);
          controller.abort(late);
          reject(late);
        }, timeoutMs);
      });
      try {
        return await Promise.race([client(request), deadline]);
      } catch (error) {
        const where = offline ? 'the cache' : this.#options.mirror;
        const why = error instanceof TufUpdateError ? `: ${error.message}` : '';
        throw new TrustRootError(
          'TRUST_ROOT_UNAVAILABLE',
          this.name,
          `cannot load ${target} from ${where}${why}`,
          {
            cause: error,
          },
        );
      } finally {
        clearTimeout(timer);
      }
    });
  }

  #now(): Date {
    return (this.#options.clock ?? (() => new Date()))();
  }
}
