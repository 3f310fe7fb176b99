// A TUF client for trust roots: tuf-js's Updater (the client @sigstore/tuf is built on) with files
// from an injected source, so one code path serves a mirror over HTTP (`remote` TrustRoots, the
// public-good root, `--tuf-mirror`) and a repository held in memory (`repository` TrustRoots'
// `mirrorFS`), root rotations (`2.root.json`, ...) included. Each update works in a temporary
// directory that is removed afterwards: it starts from the initial root, or from the verified
// metadata of an earlier update (a cache entry), and returns what tuf-js verified, for the caller
// to keep, with the earliest expiry of that metadata (after which it is not to be trusted).
// Every download is streamed against the smaller of tuf-js's own length limit for the file, a
// ceiling for any file, and what is left of the update's budget.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import {
  BodyTooLargeError,
  cancelQuietly,
  dispatchFetch,
  type FetchFunction,
  type FetchResponse,
  type HostChooser,
  OutboundNetwork,
  readCappedBody,
  UnreachableError,
  unreachable,
} from '@signet/registry';
import type { Fetcher } from 'tuf-js';
import { isCacheFilePath } from './tuf-cache.js';

/** Reads one file of the repository: resolves to its bytes, or rejects with {@link TufFileMissing}. */
export type TufFileSource = (url: string, maxBytes: number, signal: AbortSignal) => Promise<Buffer>;

/** The repository has no such file (HTTP 403/404): what ends the search for newer roots. */
export class TufFileMissing extends Error {
  override readonly name = 'TufFileMissing';
}

/** One TUF target to fetch through TUF verification. */
export interface TufRequest {
  /** Mirror base URL (metadata at `<mirror>/<n>.root.json`, targets under `<mirror>/targets`). */
  readonly mirror: string;
  /** The trusted initial `root.json`; a newer root in `cached` takes precedence. */
  readonly root: Buffer;
  /** Target name, `trusted_root.json` by default. */
  readonly target: string;
  /** Timeout of one file; `signal` (and the caller) bound the whole update. */
  readonly timeoutMs: number;
  /** Verified metadata of an earlier update (a cache entry), which the update starts from. */
  readonly cached?: ReadonlyMap<string, Buffer>;
  /** Where files come from; HTTP(S) to hosts anyone may name when absent (see {@link httpFiles}). */
  readonly files?: TufFileSource;
  /** Only `cached`: no request at all. */
  readonly offline?: boolean;
  /** Aborts the update. */
  readonly signal?: AbortSignal;
  /** Bytes the update may download in all, root rotations included (default {@link MAX_TUF_UPDATE_BYTES}). */
  readonly maxBytes?: number;
}

/** A verified target. */
export interface TufResult {
  readonly content: string;
  /** The earliest expiry of the metadata it was verified with: not to be trusted after it. */
  readonly expires: Date;
  /** The verified metadata and target (paths as in a cache entry), for the next update to start from. */
  readonly verified: ReadonlyMap<string, Buffer>;
}

/** Fetches and verifies a TUF target. Injected so tests and air-gapped setups decide how. */
export type TufClient = (request: TufRequest) => Promise<TufResult>;

/** Why an update failed, for the message: never the text a server or a TLS library chose. */
export type TufFailureReason = 'unreachable' | 'too-large' | 'status' | 'expired' | 'invalid' | 'not-found';

export class TufUpdateError extends Error {
  override readonly name = 'TufUpdateError';
  readonly code = 'SIGNET_TUF_UPDATE_FAILED';
  readonly reason: TufFailureReason;

  constructor(reason: TufFailureReason, message: string, options?: ErrorOptions) {
    super(message, options);
    this.reason = reason;
  }
}

const MAX_ROOT_ROTATIONS = 64;
/** No file is read past this, whatever the metadata says its length is (tuf-js's largest default). */
export const MAX_TUF_FILE_BYTES = 5_000_000;
/** Bytes one update may download in all, root rotations included. */
export const MAX_TUF_UPDATE_BYTES = 8 * 1024 * 1024;
/** The roles whose expiry bounds the trust in a target: every update loads all four. */
const TOP_ROLES = ['root', 'timestamp', 'snapshot', 'targets'] as const;

/** The default {@link TufClient}: tuf-js's Updater, no retries, each file under the timeout. */
export const tufJsClient: TufClient = async (request) => {
  // tuf-js (about 35 modules) is loaded by the first update, not at start-up.
  const [{ Updater }, { DownloadHTTPError, ExpiredMetadataError }] = await Promise.all([
    import('tuf-js'),
    import('tuf-js/dist/error.js'),
  ]);
  const dir = await mkdtemp(join(tmpdir(), 'signet-tuf-'));
  const offline = request.offline === true;
  let files = offline ? refuseAll : request.files;
  let outbound: OutboundNetwork | undefined;
  if (files === undefined) {
    // No file source given: HTTP(S) through the guard, its connections closed when done.
    outbound = new OutboundNetwork();
    files = httpFiles({ outbound });
  }
  const fetcher = new SourceFetcher(files, dir, request, DownloadHTTPError);
  try {
    await mkdir(join(dir, 'targets'));
    for (const [path, data] of request.cached ?? []) {
      if (isCacheFilePath(path)) await writeFile(join(dir, path), data);
    }
    if (!request.cached?.has('root.json')) await writeFile(join(dir, 'root.json'), request.root);
    const mirror = request.mirror.replace(/\/+$/, '');
    const updater = new Updater({
      metadataDir: dir,
      metadataBaseUrl: mirror,
      targetDir: join(dir, 'targets'),
      targetBaseUrl: `${mirror}/targets`,
      fetcher,
      forceCache: offline,
      config: { maxRootRotations: MAX_ROOT_ROTATIONS, fetchTimeout: request.timeoutMs, fetchRetries: 0 },
    });
    let path: string;
    try {
      await updater.refresh();
      const info = await updater.getTargetInfo(request.target);
      if (info === undefined) {
        throw new TufUpdateError(
          'not-found',
          `the repository has no target ${JSON.stringify(request.target)}`,
        );
      }
      const cached = await updater.findCachedTarget(info);
      if (cached === undefined && offline) {
        throw new TufUpdateError('not-found', `${request.target} is not in the cache`);
      }
      path = cached ?? (await updater.downloadTarget(info));
    } catch (error) {
      throw failureOf(error, fetcher.failure, ExpiredMetadataError);
    }
    const content = await readFile(path, 'utf8');
    const verified = new Map<string, Buffer>();
    for (const role of TOP_ROLES) verified.set(`${role}.json`, await readFile(join(dir, `${role}.json`)));
    verified.set(`targets/${basename(path)}`, Buffer.from(content, 'utf8'));
    return { content, expires: earliestExpiry(verified), verified };
  } finally {
    await outbound?.close();
    await rm(dir, { recursive: true, force: true });
  }
};

/** The expiry of the top-level metadata that expires first. */
function earliestExpiry(verified: ReadonlyMap<string, Buffer>): Date {
  let earliest = Number.POSITIVE_INFINITY;
  for (const role of TOP_ROLES) {
    const data = verified.get(`${role}.json`) as Buffer;
    const expires = (JSON.parse(data.toString('utf8')) as { signed: { expires: string } }).signed.expires;
    earliest = Math.min(earliest, Date.parse(expires));
  }
  return new Date(earliest);
}

/**
 * The error an update failed with: a download's failure (what tuf-js wraps into its own errors,
 * text and all), expired metadata (a frozen mirror), or metadata that does not verify.
 */
function failureOf(
  error: unknown,
  download: TufUpdateError | undefined,
  expired: new (...args: never[]) => Error,
): TufUpdateError {
  if (error instanceof TufUpdateError) return error;
  if (download !== undefined) return download;
  const isExpired =
    error instanceof expired || (error instanceof Error && /ExpiredMetadataError/.test(error.message));
  if (isExpired) {
    return new TufUpdateError('expired', 'its metadata has expired (is the mirror still updated?)', {
      cause: error,
    });
  }
  return new TufUpdateError('invalid', 'its metadata does not verify', { cause: error });
}

const refuseAll: TufFileSource = async (url) => {
  throw new TufUpdateError('not-found', `${basename(url)} is not in the cache`);
};

export interface HttpFilesOptions {
  /** Where connections may go (default: the guard alone, nothing listed). */
  readonly outbound?: OutboundNetwork;
  /** `operator` for a mirror the operator configured (`--tuf-mirror`); default `other`. */
  readonly chosenBy?: HostChooser;
  /** How requests are sent (`dispatchFetch`). */
  readonly fetch?: FetchFunction;
}

/**
 * Files over HTTP(S): through the private-address guard unless the operator chose the mirror, no
 * redirects, 403/404 as missing, the body streamed against `maxBytes`.
 */
export function httpFiles(options: HttpFilesOptions = {}): TufFileSource {
  const outbound = options.outbound ?? new OutboundNetwork();
  const chosenBy = options.chosenBy ?? 'other';
  const fetch = options.fetch ?? dispatchFetch;
  return async (raw, maxBytes, signal) => {
    const url = URL.parse(raw);
    if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      throw new TufUpdateError('invalid', `${raw} is not an http(s) URL`);
    }
    let response: FetchResponse;
    try {
      const dispatcher = await outbound.dispatcherFor(url, chosenBy);
      response = await fetch(url, { method: 'GET', signal, dispatcher });
    } catch (error) {
      throw unreachable(url.host, error);
    }
    if (response.status === 404 || response.status === 403) {
      await cancelQuietly(response.body);
      throw new TufFileMissing(`${raw}: ${response.status}`);
    }
    if (response.status < 200 || response.status > 299) {
      await cancelQuietly(response.body);
      throw new TufUpdateError(
        'status',
        `the mirror answered ${response.status} for ${basename(url.pathname)}`,
      );
    }
    try {
      return await readCappedBody(response, maxBytes);
    } catch (error) {
      if (error instanceof BodyTooLargeError) throw error;
      throw unreachable(url.host, error);
    }
  };
}

/** Files of an unpacked repository, by path below the mirror URL. */
export function memoryFiles(mirror: string, files: ReadonlyMap<string, Buffer>): TufFileSource {
  const base = `${mirror.replace(/\/+$/, '')}/`;
  return async (url, maxBytes) => {
    const data = url.startsWith(base) ? files.get(decodeURIComponent(url.slice(base.length))) : undefined;
    if (data === undefined) throw new TufFileMissing(`${url}: not in the repository`);
    if (data.length > maxBytes) throw new BodyTooLargeError(maxBytes);
    return data;
  };
}

/** tuf-js's own `DownloadHTTPError`, the one error type it reads as "no such file". */
type MissingFileError = new (message: string, statusCode: number) => Error;

/**
 * tuf-js's Fetcher over a {@link TufFileSource}: each file under the request's timeout and
 * signal, and under the smallest of tuf-js's limit for it, {@link MAX_TUF_FILE_BYTES} and what is
 * left of the update's budget. The first failure is kept, because tuf-js wraps some into
 * errors of its own that keep only their text.
 */
class SourceFetcher implements Fetcher {
  readonly #files: TufFileSource;
  readonly #dir: string;
  readonly #request: TufRequest;
  readonly #missing: MissingFileError;
  #spent = 0;
  #downloads = 0;
  failure: TufUpdateError | undefined;

  constructor(files: TufFileSource, dir: string, request: TufRequest, missing: MissingFileError) {
    this.#files = files;
    this.#dir = dir;
    this.#request = request;
    this.#missing = missing;
  }

  async downloadBytes(url: string, maxLength: number): Promise<Buffer> {
    const budget = this.#request.maxBytes ?? MAX_TUF_UPDATE_BYTES;
    const left = budget - this.#spent;
    const limit = Math.min(maxLength, MAX_TUF_FILE_BYTES, left);
    const timeout = AbortSignal.timeout(this.#request.timeoutMs);
    const signal = this.#request.signal ? AbortSignal.any([this.#request.signal, timeout]) : timeout;
    try {
      const data = await this.#files(url, limit, signal);
      this.#spent += data.length;
      return data;
    } catch (error) {
      // tuf-js stops looking for newer roots at a 403/404 only when it sees its own error type.
      if (error instanceof TufFileMissing) throw new this.#missing(error.message, 404);
      this.failure ??= this.#describe(url, error, limit === left && left < maxLength ? budget : undefined);
      throw this.failure;
    }
  }

  async downloadFile<T>(url: string, maxLength: number, handler: (file: string) => Promise<T>): Promise<T> {
    const data = await this.downloadBytes(url, maxLength);
    const file = join(this.#dir, `download-${++this.#downloads}`);
    await writeFile(file, data);
    try {
      return await handler(file);
    } finally {
      await rm(file, { force: true });
    }
  }

  #describe(url: string, error: unknown, budget: number | undefined): TufUpdateError {
    if (error instanceof TufUpdateError) return error;
    if (error instanceof BodyTooLargeError) {
      const what =
        budget === undefined
          ? `${basename(url)} is ${error.message}`
          : `the update is larger than ${budget} bytes`;
      return new TufUpdateError('too-large', what, { cause: error });
    }
    if (error instanceof UnreachableError)
      return new TufUpdateError('unreachable', error.message, { cause: error });
    return new TufUpdateError('invalid', `${basename(url)} could not be read`, { cause: error });
  }
}
