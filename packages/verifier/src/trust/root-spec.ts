// What a `remote` or `repository` TrustRoot asks for, checked for form and decoded without I/O:
// the loaders (tuf.ts) and the keeper of remote roots (remote-roots.ts) both start from it.
import type { TrustRootRemote } from '@signet/k8s-types';
import { decodeBase64 } from '../sigstore/pem.js';
import { TrustRootError } from './errors.js';

export const DEFAULT_TRUSTED_ROOT_TARGET = 'trusted_root.json';

/** What a remote TrustRoot needs to be fetched: already checked and decoded by the loader. */
export interface RemoteRootSpec {
  readonly name: string;
  readonly mirror: string;
  readonly root: Buffer;
  readonly target: string;
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

export function checkTargetsPath(name: string, targets: string | undefined): void {
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

export function initialRoot(name: string, encoded: string): Buffer {
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
