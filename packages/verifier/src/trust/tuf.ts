// TrustRoots served by a TUF repository: `remote` (a mirror URL) and `repository` (the repository
// itself, gzipped and tarred into `mirrorFS`). Both are verified by @sigstore/tuf from the
// TrustRoot's initial root. The network is reached only for `remote`, only through the injected
// `TufClient`, and under a deadline; `repository` never leaves the process.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TrustRootRemote, TrustRootRepository } from '@signet/k8s-types';
import { initTUF } from '@sigstore/tuf';
import { decodeBase64, sha256Hex } from '../sigstore/pem.js';
import { TrustRootError } from './errors.js';
import { readTarGz } from './tar.js';
import { type CompiledTrustRoot, trustRootFromJSON } from './trusted-root.js';

export const DEFAULT_TRUSTED_ROOT_TARGET = 'trusted_root.json';
export const DEFAULT_TUF_TIMEOUT_MS = 10_000;

/** One TUF target to fetch through TUF verification. */
export interface TufRequest {
  /** Mirror base URL (metadata at `<mirror>/<n>.root.json`, targets under `<mirror>/targets`). */
  readonly mirror: string;
  /** The trusted initial `root.json`. */
  readonly root: Buffer;
  /** Target name, `trusted_root.json` by default. */
  readonly target: string;
  /** Per-request timeout; the caller also enforces an overall deadline. */
  readonly timeoutMs: number;
  /** Serve everything from already-cached metadata; any miss fails instead of fetching. */
  readonly cacheDir?: string;
}

/** Fetches and verifies a TUF target, returning its content. Injected so tests and air-gapped setups decide how. */
export type TufClient = (request: TufRequest) => Promise<string>;

/** The default {@link TufClient}: @sigstore/tuf (tuf-js) with a private, temporary cache, no retries. */
export const sigstoreTufClient: TufClient = async (request) => {
  const owned = request.cacheDir === undefined;
  const dir = request.cacheDir ?? (await mkdtemp(join(tmpdir(), 'signet-tuf-')));
  try {
    const rootPath = join(dir, 'initial-root.json');
    await writeFile(rootPath, request.root);
    const tuf = await initTUF({
      mirrorURL: request.mirror,
      rootPath,
      cachePath: dir,
      forceCache: request.cacheDir !== undefined,
      retry: false,
      timeout: request.timeoutMs,
    });
    return await tuf.getTarget(request.target);
  } finally {
    if (owned) await rm(dir, { recursive: true, force: true });
  }
};

export interface TufLoadOptions {
  /** How `remote` TrustRoots are fetched; {@link sigstoreTufClient} by default. */
  readonly tufClient?: TufClient;
  /** Overall deadline for loading one TrustRoot (default 10 s). */
  readonly timeoutMs?: number;
  readonly clock?: () => Date;
}

/** Loads a `remote` TrustRoot: the trusted root target from its mirror, TUF-verified from `root`. */
export async function loadRemoteTrustRoot(
  name: string,
  remote: TrustRootRemote,
  options: TufLoadOptions = {},
): Promise<CompiledTrustRoot> {
  checkTargetsPath(name, remote.targets);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TUF_TIMEOUT_MS;
  const request: TufRequest = {
    mirror: remote.mirror.replace(/\/+$/, ''),
    root: initialRoot(name, remote.root),
    target: remote.trustedRootTarget || DEFAULT_TRUSTED_ROOT_TARGET,
    timeoutMs,
  };
  const document = await fetchTarget(name, options.tufClient ?? sigstoreTufClient, request, timeoutMs);
  return trustRootFromJSON(document, { name, origin: 'remote', ...clockOption(options) });
}

/**
 * Loads a `repository` TrustRoot offline: `mirrorFS` is unpacked into a TUF cache and @sigstore/tuf
 * verifies timestamp, snapshot, targets and the target against `root` without fetching (its mirror
 * URL is a `file:` URL that fetch refuses, so a cache miss fails instead of reaching out).
 * Root rotation inside `mirrorFS` (`2.root.json`...) needs a TUF client that reads roots from
 * memory; it is refused with `TRUST_ROOT_UNSUPPORTED`.
 */
export async function loadRepositoryTrustRoot(
  name: string,
  repository: TrustRootRepository,
  options: TufLoadOptions = {},
): Promise<CompiledTrustRoot> {
  checkTargetsPath(name, repository.targets);
  const root = initialRoot(name, repository.root);
  const files = unpackMirror(name, repository.mirrorFS);
  const target = repository.trustedRootTarget || DEFAULT_TRUSTED_ROOT_TARGET;
  const mirror = `file:///signet-offline-mirror/${encodeURIComponent(name)}`;
  const base = await mkdtemp(join(tmpdir(), 'signet-tuf-mirror-'));
  try {
    await seedCache(
      name,
      join(base, encodeURIComponent(`/signet-offline-mirror/${encodeURIComponent(name)}`)),
      {
        root,
        files,
        target,
      },
    );
    const timeoutMs = options.timeoutMs ?? DEFAULT_TUF_TIMEOUT_MS;
    const request: TufRequest = { mirror, root, target, timeoutMs, cacheDir: base };
    const document = await fetchTarget(name, sigstoreTufClient, request, timeoutMs);
    return trustRootFromJSON(document, { name, origin: 'repository', ...clockOption(options) });
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}

function clockOption(options: TufLoadOptions): { clock?: () => Date } {
  return options.clock ? { clock: options.clock } : {};
}

function checkTargetsPath(name: string, targets: string | undefined): void {
  if (targets !== undefined && targets !== '' && targets.replace(/^\/+|\/+$/g, '') !== 'targets') {
    throw new TrustRootError(
      'TRUST_ROOT_UNSUPPORTED',
      name,
      `targets path ${JSON.stringify(targets)} is not supported yet (@sigstore/tuf reads targets from "<mirror>/targets")`,
    );
  }
}

function initialRoot(name: string, encoded: string): Buffer {
  try {
    const root = decodeBase64(encoded);
    const parsed = JSON.parse(root.toString('utf8')) as { signed?: { _type?: unknown; version?: unknown } };
    if (parsed.signed?._type !== 'root' || !Number.isSafeInteger(parsed.signed.version)) {
      throw new Error('not TUF root metadata');
    }
    return root;
  } catch (error) {
    throw new TrustRootError('TRUST_ROOT_INVALID', name, 'root must be base64 of a TUF root.json', {
      cause: error,
    });
  }
}

async function fetchTarget(
  name: string,
  client: TufClient,
  request: TufRequest,
  timeoutMs: number,
): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([client(request), deadline]);
  } catch (error) {
    const where = request.cacheDir === undefined ? `from ${request.mirror}` : 'from mirrorFS';
    throw new TrustRootError('TRUST_ROOT_UNAVAILABLE', name, `cannot load ${request.target} ${where}`, {
      cause: error,
    });
  } finally {
    clearTimeout(timer);
  }
}

function unpackMirror(name: string, mirrorFS: string): Map<string, Buffer> {
  let files: Map<string, Buffer>;
  try {
    files = readTarGz(decodeBase64(mirrorFS));
  } catch (error) {
    throw new TrustRootError('TRUST_ROOT_INVALID', name, 'mirrorFS must be base64 of a gzipped tar', {
      cause: error,
    });
  }
  // policy-controller's archives hold the repository under `repository/`.
  const stripped = new Map<string, Buffer>();
  for (const [path, data] of files) stripped.set(path.replace(/^repository\//, ''), data);
  return stripped;
}

interface CacheSeed {
  readonly root: Buffer;
  readonly files: ReadonlyMap<string, Buffer>;
  readonly target: string;
}

const METADATA = /^(?:(\d+)\.)?([^/]+)\.json$/;

/**
 * Writes the layout @sigstore/tuf's cache has: `root.json` (the TrustRoot's root, the only one
 * trusted), the newest version of every other role, and `targets/<name>`. Nothing here is
 * trusted: @sigstore/tuf verifies each file before use.
 */
async function seedCache(name: string, dir: string, seed: CacheSeed): Promise<void> {
  const rootVersion = versionOf(seed.root);
  const newest = new Map<string, { version: number; data: Buffer }>();
  for (const [path, data] of seed.files) {
    const match = METADATA.exec(path);
    if (match === null) continue;
    const version = match[1] === undefined ? 0 : Number(match[1]);
    const role = String(match[2]);
    if (role === 'root') {
      if (version > rootVersion) {
        throw new TrustRootError(
          'TRUST_ROOT_UNSUPPORTED',
          name,
          `mirrorFS holds ${path}, newer than the given root (version ${rootVersion}): root rotation inside mirrorFS is not supported yet; give the newest root as spec.repository.root`,
        );
      }
      continue;
    }
    const known = newest.get(role);
    if (known === undefined || version >= known.version) newest.set(role, { version, data });
  }
  await mkdir(join(dir, 'targets'), { recursive: true });
  await writeFile(join(dir, 'root.json'), seed.root);
  for (const [role, { data }] of newest) await writeFile(join(dir, `${encodeURIComponent(role)}.json`), data);
  const target = targetFile(seed.files, seed.target);
  if (target !== undefined) await writeFile(join(dir, 'targets', encodeURIComponent(seed.target)), target);
}

/** The version of a root `initialRoot` accepted. */
function versionOf(root: Buffer): number {
  return (JSON.parse(root.toString('utf8')) as { signed: { version: number } }).signed.version;
}

/** `targets/<name>`, or with consistent snapshots `targets/<sha256>.<name>` whose content has that hash. */
function targetFile(files: ReadonlyMap<string, Buffer>, target: string): Buffer | undefined {
  const plain = files.get(`targets/${target}`);
  if (plain !== undefined) return plain;
  for (const [path, data] of files) {
    if (!path.startsWith('targets/') || !path.endsWith(`.${target}`)) continue;
    const prefix = path.slice('targets/'.length, -(target.length + 1));
    if (prefix === sha256Hex(data)) return data;
  }
  return undefined;
}
