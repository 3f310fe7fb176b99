// Content digests: the only thing that makes registry content trustworthy. Every manifest and blob
// is hashed and compared with the digest it was asked for before anyone looks inside it.
import { createHash } from 'node:crypto';
import { RegistryError, type RegistryErrorContext } from './errors.js';

/** The algorithms registries use, with their hex lengths. */
const DIGEST = /^(?:sha256:[a-f0-9]{64}|sha384:[a-f0-9]{96}|sha512:[a-f0-9]{128})$/;

/** True for `sha256:<64 lowercase hex>` (and sha384/sha512 of their lengths). */
export function isDigest(value: string): boolean {
  return DIGEST.test(value);
}

/** The digest of `bytes` with the algorithm of `like` (sha256 by default). */
export function digestOf(bytes: Uint8Array, like = 'sha256:'): string {
  const algorithm = like.slice(0, like.indexOf(':'));
  return `${algorithm}:${createHash(algorithm).update(bytes).digest('hex')}`;
}

/** Throws `DIGEST_MISMATCH` unless `bytes` hash to `expected`. */
export function verifyDigest(
  bytes: Uint8Array,
  expected: string,
  context: RegistryErrorContext,
  what: string,
): void {
  const actual = digestOf(bytes, expected);
  if (actual !== expected) {
    throw new RegistryError('DIGEST_MISMATCH', context, `${what} hashes to ${actual}, not ${expected}`);
  }
}

/** The tag cosign derives from a digest: `sha256:abc` -> `sha256-abc`. */
export function digestTag(digest: string): string {
  return digest.replace(':', '-');
}
