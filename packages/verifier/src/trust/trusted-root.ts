// A trust root as Signet uses it: the protobuf-specs TrustedRoot and the sigstore-js
// TrustMaterial built from it once (certificates and keys parsed, not per admission).
import { TrustedRoot } from '@sigstore/protobuf-specs';
import { type TrustMaterial, toTrustMaterial } from '@sigstore/verify';
import { TrustRootError } from './errors.js';

/** Where a trust root came from. */
export type TrustRootOrigin =
  | 'public-good'
  | 'trusted-root-json'
  | 'sigstore-keys'
  | 'remote'
  | 'repository'
  | 'ca-cert';

/** A loaded, parsed trust root. Immutable; share it between policies. */
export interface CompiledTrustRoot {
  /** The TrustRoot object's name, or `public-good`. */
  readonly name: string;
  readonly origin: TrustRootOrigin;
  readonly trustedRoot: TrustedRoot;
  /** CAs, CT logs, Rekor logs and TSAs for sigstore-js. Its `publicKey` finder knows no keys. */
  readonly material: TrustMaterial;
  /** When it was loaded, from the injected clock. */
  readonly loadedAt: Date;
}

export const PUBLIC_GOOD = 'public-good';
const MEDIA_TYPE_PREFIX = 'application/vnd.dev.sigstore.trustedroot';

/** Builds the TrustMaterial of `trustedRoot`. Throws {@link TrustRootError} `TRUST_ROOT_INVALID`. */
export function compileTrustedRoot(
  name: string,
  origin: TrustRootOrigin,
  trustedRoot: TrustedRoot,
  loadedAt: Date,
): CompiledTrustRoot {
  checkLogValidity(name, trustedRoot);
  let material: TrustMaterial;
  try {
    material = toTrustMaterial(trustedRoot);
  } catch (error) {
    throw new TrustRootError('TRUST_ROOT_INVALID', name, 'a certificate or key does not parse', {
      cause: error,
    });
  }
  return Object.freeze({ name, origin, trustedRoot, material: Object.freeze(material), loadedAt });
}

/**
 * A log key without a validity start would be trusted for entries from any time, before the key
 * existed too: the trusted-root specification requires the start, and sigstore clients refuse a
 * root without it. Refused here, naming the log.
 */
function checkLogValidity(name: string, trustedRoot: TrustedRoot): void {
  const logs = [
    ...trustedRoot.tlogs.map((log, i) => ({ log, where: `tlogs[${i}]` })),
    ...trustedRoot.ctlogs.map((log, i) => ({ log, where: `ctlogs[${i}]` })),
  ];
  for (const { log, where } of logs) {
    if (log.publicKey?.validFor?.start === undefined) {
      throw new TrustRootError(
        'TRUST_ROOT_INVALID',
        name,
        `${where} (${log.baseUrl || 'no baseUrl'}): the public key has no validFor.start`,
      );
    }
  }
}

/**
 * Parses a `TrustedRoot` JSON document (a string, bytes, or parsed JSON), as written by
 * sigstore's TUF repositories and `cosign trusted-root create`.
 */
export function trustRootFromJSON(
  document: unknown,
  options: { readonly name: string; readonly origin?: TrustRootOrigin; readonly clock?: () => Date },
): CompiledTrustRoot {
  const { name } = options;
  let json = document;
  try {
    if (typeof json === 'string') json = JSON.parse(json);
    else if (json instanceof Uint8Array) json = JSON.parse(Buffer.from(json).toString('utf8'));
  } catch (error) {
    throw new TrustRootError('TRUST_ROOT_INVALID', name, 'trusted root is not JSON', { cause: error });
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new TrustRootError('TRUST_ROOT_INVALID', name, 'trusted root must be a JSON object');
  }
  const mediaType = (json as { mediaType?: unknown }).mediaType;
  if (
    mediaType !== undefined &&
    (typeof mediaType !== 'string' || !mediaType.startsWith(MEDIA_TYPE_PREFIX))
  ) {
    throw new TrustRootError('TRUST_ROOT_INVALID', name, `unexpected mediaType ${JSON.stringify(mediaType)}`);
  }
  let trustedRoot: TrustedRoot;
  try {
    trustedRoot = TrustedRoot.fromJSON(json);
  } catch (error) {
    throw new TrustRootError('TRUST_ROOT_INVALID', name, 'not a TrustedRoot', { cause: error });
  }
  const loadedAt = (options.clock ?? (() => new Date()))();
  return compileTrustedRoot(name, options.origin ?? 'trusted-root-json', trustedRoot, loadedAt);
}
