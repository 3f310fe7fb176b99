// TrustRoots served by a TUF repository: `remote` (a mirror URL) and `repository` (the repository
// itself, gzipped and tarred into `mirrorFS`). Both are verified by tuf-js from the TrustRoot's
// initial root, following root rotations (`2.root.json`, ...) in either form. The network is
// reached only for `remote`, only through the injected `TufClient`, and under a deadline;
// `repository` never leaves the process.
import type { TrustRootRemote, TrustRootRepository } from '@signet/k8s-types';
import type { NetworkOptions } from '@signet/registry';
import { OutboundNetwork } from '@signet/registry';
import { decodeBase64 } from '../sigstore/pem.js';
import { TrustRootError } from './errors.js';
import type { RemoteRootSpec, RemoteTrustRoots } from './remote-roots.js';
import { readTarGz } from './tar.js';
import { type CompiledTrustRoot, trustRootFromJSON } from './trusted-root.js';
import {
  httpFiles,
  memoryFiles,
  type TufClient,
  type TufRequest,
  TufUpdateError,
  tufJsClient,
} from './tuf-client.js';

export type { TufClient, TufRequest, TufResult } from './tuf-client.js';

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
  /** Without `remoteRoots`: hosts (`host[:port]`) the operator allows mirrors on private addresses at. */
  readonly privateHosts?: Iterable<string>;
  /** Without `remoteRoots`: proxies (from `env`), extra CAs, name resolution (`lookup`). */
  readonly network?: NetworkOptions;
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
  const spec = remoteRootSpec(name, remote);
  if (options.offline) {
    throw new TrustRootError(
      'TRUST_ROOT_NOT_FETCHED',
      name,
      `checked for form only; its mirror ${spec.mirror} is contacted when the TrustRoot is loaded`,
    );
  }
  if (options.remoteRoots !== undefined) return options.remoteRoots.load(spec);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TUF_TIMEOUT_MS;
  // Once, without a cache: the mirror goes through the private-address guard.
  const outbound = new OutboundNetwork({
    ...options.network,
    ...(options.privateHosts === undefined ? {} : { privateHosts: options.privateHosts }),
  });
  const { mirror, root, target } = spec;
  const request: TufRequest = { mirror, root, target, timeoutMs, files: httpFiles({ outbound }) };
  try {
    const document = await fetchTarget(name, options.tufClient ?? tufJsClient, request, timeoutMs);
    return trustRootFromJSON(document, { name, origin: 'remote', ...clockOption(options) });
  } finally {
    await outbound.close();
  }
}

/**
 * What a `remote` TrustRoot asks to fetch, checked for form (no I/O): an http(s) mirror, the
 * default targets path, an initial root that is TUF root metadata no larger than tuf-js accepts
 * for a root. Throws {@link TrustRootError}.
 */
export function remoteRootSpec(name: string, remote: TrustRootRemote): RemoteRootSpec {
  checkTargetsPath(name, remote.targets);
  const mirror = remote.mirror.replace(/\/+$/, '');
  const url = URL.parse(mirror);
  if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.host === '') {
    throw new TrustRootError(
      'TRUST_ROOT_INVALID',
      name,
      `mirror ${JSON.stringify(remote.mirror)} is not an http(s) URL`,
    );
  }
  return {
    name,
    mirror,
    root: initialRoot(name, remote.root),
    target: remote.trustedRootTarget || DEFAULT_TRUSTED_ROOT_TARGET,
  };
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

function checkTargetsPath(name: string, targets: string | undefined): void {
  if (targets !== undefined && targets !== '' && targets.replace(/^\/+|\/+$/g, '') !== 'targets') {
    throw new TrustRootError(
      'TRUST_ROOT_UNSUPPORTED',
      name,
      `targets path ${JSON.stringify(targets)} is not supported yet (@sigstore/tuf reads targets from "<mirror>/targets")`,
    );
  }
}

/** tuf-js's limit for a root (`rootMaxLength`): a larger initial root could never be updated anyway. */
const MAX_ROOT_BYTES = 512_000;

function initialRoot(name: string, encoded: string): Buffer {
  let root: Buffer;
  try {
    root = decodeBase64(encoded);
  } catch (error) {
    throw new TrustRootError('TRUST_ROOT_INVALID', name, 'root must be base64 of a TUF root.json', {
      cause: error,
    });
  }
  if (root.length > MAX_ROOT_BYTES) {
    throw new TrustRootError(
      'TRUST_ROOT_INVALID',
      name,
      `root is larger than ${MAX_ROOT_BYTES} bytes, the most tuf-js accepts for a root`,
    );
  }
  try {
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
  const controller = new AbortController();
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const late = new Error(`no answer within ${timeoutMs} ms`);
      controller.abort(late);
      reject(late);
    }, timeoutMs);
  });
  try {
    return (await Promise.race([client({ ...request, signal: controller.signal }), deadline])).content;
  } catch (error) {
    const where = request.mirror.startsWith('memory:') ? 'from mirrorFS' : `from ${request.mirror}`;
    const why = error instanceof TufUpdateError ? `: ${error.message}` : '';
    throw new TrustRootError('TRUST_ROOT_UNAVAILABLE', name, `cannot load ${request.target} ${where}${why}`, {
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
