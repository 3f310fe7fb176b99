// TrustRoots served by a TUF repository: `remote` (a mirror URL) and `repository` (the repository
// itself, gzipped and tarred into `mirrorFS`). Both are verified by tuf-js from the TrustRoot's
// initial root, following root rotations (`2.root.json`, ...) in either form. The network is
// reached only for `remote`, only through the injected `TufClient`, and under a deadline;
// `repository` never leaves the process.
import type { TrustRootRemote, TrustRootRepository } from '@signet/k8s-types';
import { decodeBase64 } from '../sigstore/pem.js';
import { TrustRootError } from './errors.js';
import type { RemoteTrustRoots } from './remote-roots.js';
import { readTarGz } from './tar.js';
import { type CompiledTrustRoot, trustRootFromJSON } from './trusted-root.js';
import { memoryFiles, type TufClient, type TufRequest, tufJsClient } from './tuf-client.js';

export type { TufClient, TufRequest } from './tuf-client.js';

export const DEFAULT_TRUSTED_ROOT_TARGET = 'trusted_root.json';
export const DEFAULT_TUF_TIMEOUT_MS = 10_000;

export interface TufLoadOptions {
  /** How `remote` TrustRoots are fetched; tuf-js over HTTP by default. */
  readonly tufClient?: TufClient;
  /** Overall deadline for loading one TrustRoot (default 10 s). */
  readonly timeoutMs?: number;
  readonly clock?: () => Date;
  /** Keeps `remote` TrustRoots across compiles and refreshes them (see RemoteTrustRoots); fetched per load without it. */
  readonly remoteRoots?: RemoteTrustRoots;
  /**
   * No network I/O: a `remote` TrustRoot is checked for form (mirror URL, initial root, targets
   * path) and then fails with `TRUST_ROOT_NOT_FETCHED`, its mirror never contacted.
   */
  readonly offline?: boolean;
}

/** Loads a `remote` TrustRoot: the trusted root target from its mirror, TUF-verified from `root`. */
export async function loadRemoteTrustRoot(
  name: string,
  remote: TrustRootRemote,
  options: TufLoadOptions = {},
): Promise<CompiledTrustRoot> {
  checkTargetsPath(name, remote.targets);
  if (options.offline) {
    initialRoot(name, remote.root);
    throw new TrustRootError(
      'TRUST_ROOT_NOT_FETCHED',
      name,
      `checked for form only; its mirror ${mirrorUrl(name, remote.mirror)} is contacted when the TrustRoot is loaded`,
    );
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TUF_TIMEOUT_MS;
  const request: TufRequest = {
    mirror: remote.mirror.replace(/\/+$/, ''),
    root: initialRoot(name, remote.root),
    target: remote.trustedRootTarget || DEFAULT_TRUSTED_ROOT_TARGET,
    timeoutMs,
  };
  if (options.remoteRoots !== undefined) {
    return options.remoteRoots.load({
      name,
      remote,
      mirror: request.mirror,
      root: request.root,
      target: request.target,
    });
  }
  const document = await fetchTarget(name, options.tufClient ?? tufJsClient, request, timeoutMs);
  return trustRootFromJSON(document, { name, origin: 'remote', ...clockOption(options) });
}

/**
 * Loads a `repository` TrustRoot offline: tuf-js reads `mirrorFS` from memory (under a mirror URL
 * that is never dialled) and verifies root rotations, timestamp, snapshot, targets and the target
 * against `root`.
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
  const mirror = `memory://mirrorfs/${encodeURIComponent(name)}`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TUF_TIMEOUT_MS;
  const request: TufRequest = { mirror, root, target, timeoutMs, files: memoryFiles(mirror, files) };
  const document = await fetchTarget(name, tufJsClient, request, timeoutMs);
  return trustRootFromJSON(document, { name, origin: 'repository', ...clockOption(options) });
}

function clockOption(options: TufLoadOptions): { clock?: () => Date } {
  return options.clock ? { clock: options.clock } : {};
}

/** An http(s) URL with a host: what an offline load checks of a mirror. */
function mirrorUrl(name: string, mirror: string): string {
  const url = URL.parse(mirror);
  if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.hostname === '') {
    throw new TrustRootError(
      'TRUST_ROOT_INVALID',
      name,
      `mirror ${JSON.stringify(mirror)} is not an http or https URL with a host`,
    );
  }
  return url.href;
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
    const where = request.files === undefined ? `from ${request.mirror}` : 'from mirrorFS';
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
