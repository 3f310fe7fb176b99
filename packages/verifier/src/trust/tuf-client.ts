// A TUF client for trust roots: tuf-js's Updater (the client @sigstore/tuf is built on) with files
// from an injected source, so one code path serves a mirror over HTTP (`remote` TrustRoots, the
// public-good root, `--tuf-mirror`) and a repository held in memory (`repository` TrustRoots'
// `mirrorFS`), root rotations (`2.root.json`, ...) included. Metadata lives in a directory that is
// either temporary or a persistent cache: there a rotated root stays trusted across restarts, and
// `offline` reads the last verified metadata without any request (expired metadata still fails).
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Fetcher } from 'tuf-js';

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
  /** The trusted initial `root.json`; a newer root already in `metadataDir` takes precedence. */
  readonly root: Buffer;
  /** Target name, `trusted_root.json` by default. */
  readonly target: string;
  /** Per-request timeout; the caller also enforces an overall deadline. */
  readonly timeoutMs: number;
  /** Persistent metadata directory (a cache); a temporary one when absent. */
  readonly metadataDir?: string;
  /** Where files come from; HTTP(S) with Node's fetch when absent. */
  readonly files?: TufFileSource;
  /** Only the verified metadata and target already in `metadataDir`; no request at all. */
  readonly offline?: boolean;
}

/** Fetches and verifies a TUF target, returning its content. Injected so tests and air-gapped setups decide how. */
export type TufClient = (request: TufRequest) => Promise<string>;

const MAX_ROOT_ROTATIONS = 64;

/** The default {@link TufClient}: tuf-js's Updater, no retries, each file under the timeout. */
export const tufJsClient: TufClient = async (request) => {
  // tuf-js (about 35 modules) is loaded by the first refresh, not at start-up.
  const [{ Updater }, { DownloadHTTPError }] = await Promise.all([
    import('tuf-js'),
    import('tuf-js/dist/error.js'),
  ]);
  const owned = request.metadataDir === undefined;
  const dir = request.metadataDir ?? (await mkdtemp(join(tmpdir(), 'signet-tuf-')));
  try {
    await mkdir(join(dir, 'targets'), { recursive: true });
    if (!(await exists(join(dir, 'root.json')))) await writeFile(join(dir, 'root.json'), request.root);
    const mirror = request.mirror.replace(/\/+$/, '');
    const updater = new Updater({
      metadataDir: dir,
      metadataBaseUrl: mirror,
      targetDir: join(dir, 'targets'),
      targetBaseUrl: `${mirror}/targets`,
      fetcher: new SourceFetcher(request.files ?? httpFiles(fetch), request.timeoutMs, DownloadHTTPError),
      forceCache: request.offline === true,
      config: { maxRootRotations: MAX_ROOT_ROTATIONS, fetchTimeout: request.timeoutMs, fetchRetries: 0 },
    });
    await updater.refresh();
    const info = await updater.getTargetInfo(request.target);
    if (info === undefined) throw new Error(`the repository has no target ${JSON.stringify(request.target)}`);
    const cached = await updater.findCachedTarget(info);
    if (cached === undefined && request.offline === true) {
      throw new Error(`${request.target} is not in the cache`);
    }
    return await readFile(cached ?? (await updater.downloadTarget(info)), 'utf8');
  } finally {
    if (owned) await rm(dir, { recursive: true, force: true });
  }
};

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Files over HTTP(S): no redirects, a size cap, 403/404 as missing. */
export function httpFiles(fetchImpl: typeof fetch): TufFileSource {
  return async (url, maxBytes, signal) => {
    const response = await fetchImpl(url, { signal, redirect: 'error' });
    if (response.status === 404 || response.status === 403) {
      await response.body?.cancel();
      throw new TufFileMissing(`${url}: ${response.status}`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`${url} answered ${response.status}`);
    }
    const declared = Number(response.headers.get('content-length') ?? '0');
    if (declared > maxBytes) throw new Error(`${url} is ${declared} bytes, more than ${maxBytes}`);
    const data = Buffer.from(await response.arrayBuffer());
    if (data.length > maxBytes) throw new Error(`${url} is more than ${maxBytes} bytes`);
    return data;
  };
}

/** Files of an unpacked repository, by path below the mirror URL. */
export function memoryFiles(mirror: string, files: ReadonlyMap<string, Buffer>): TufFileSource {
  const base = `${mirror.replace(/\/+$/, '')}/`;
  return async (url, maxBytes) => {
    const data = url.startsWith(base) ? files.get(decodeURIComponent(url.slice(base.length))) : undefined;
    if (data === undefined) throw new TufFileMissing(`${url}: not in the repository`);
    if (data.length > maxBytes) throw new Error(`${url} is more than ${maxBytes} bytes`);
    return data;
  };
}

/** tuf-js's own `DownloadHTTPError`, the one error type it reads as "no such file". */
type MissingFileError = new (message: string, statusCode: number) => Error;

/** tuf-js's Fetcher over a {@link TufFileSource}, each file under `timeoutMs`. */
class SourceFetcher implements Fetcher {
  readonly #files: TufFileSource;
  readonly #timeoutMs: number;
  readonly #missing: MissingFileError;

  constructor(files: TufFileSource, timeoutMs: number, missing: MissingFileError) {
    this.#files = files;
    this.#timeoutMs = timeoutMs;
    this.#missing = missing;
  }

  async downloadBytes(url: string, maxLength: number): Promise<Buffer> {
    try {
      return await this.#files(url, maxLength, AbortSignal.timeout(this.#timeoutMs));
    } catch (error) {
      // tuf-js stops looking for newer roots at a 403/404 only when it sees its own error type.
      if (error instanceof TufFileMissing) throw new this.#missing(error.message, 404);
      throw error;
    }
  }

  async downloadFile<T>(url: string, maxLength: number, handler: (file: string) => Promise<T>): Promise<T> {
    const data = await this.downloadBytes(url, maxLength);
    const dir = await mkdtemp(join(tmpdir(), 'signet-tuf-file-'));
    try {
      const file = join(dir, 'download');
      await writeFile(file, data);
      return await handler(file);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
