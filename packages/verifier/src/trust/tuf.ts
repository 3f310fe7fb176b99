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
import type { RemoteTrustRoots } from './remote-roots.js';
import { checkTargetsPath, DEFAULT_TRUSTED_ROOT_TARGET, initialRoot, remoteRootSpec } from './root-spec.js';
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
  const files = await unpackMirror(name, repository.mirrorFS);
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

async function unpackMirror(name: string, mirrorFS: string): Promise<Map<string, Buffer>> {
  let files: Map<string, Buffer>;
  try {
    files = await readTarGz(decodeBase64(mirrorFS));
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
