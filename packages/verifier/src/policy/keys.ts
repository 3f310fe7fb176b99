// Public keys and CA certificates named by a policy (`key`, `keyless.ca-cert`): inline PEM, a
// Secret read through the injected lookup, or (keys only) a KMS key the caller fetched before,
// parsed once at compile time.
import type { KeyRef } from '@signet/k8s-types';
import { SignatureCheckError } from '../sigstore/errors.js';
import { pemBlocks, publicKeyFromBlock } from '../sigstore/pem.js';
import type { PolicyKey } from '../sigstore/verify.js';
import { certificateChain } from '../trust/sigstore-keys.js';
import { PolicyCompileError } from './errors.js';

/** Reads a Secret's `data` (decoded bytes by key), or `undefined` when there is no such Secret. */
export type SecretLookup = (
  namespace: string,
  name: string,
) => Readonly<Record<string, Uint8Array>> | undefined;

/** Where in the policy a key reference is, for messages. */
export interface KeyRefSite {
  readonly policy: string;
  readonly path: string;
  readonly label: string;
  /** The authority's name: a single inline key is called by it. */
  readonly authority: string;
}

export interface KeyRefContext {
  readonly lookupSecret: SecretLookup | undefined;
  /** Namespace of a `secretRef` without one. */
  readonly secretNamespace: string;
}

/** The public key a KMS gave for `key.kms` (fetched by the compiler before the keys are read). */
export interface FetchedKmsKey {
  readonly pem: string;
  readonly hashAlgorithm: string | undefined;
}

/** One PEM text and the name it is known by. */
interface PemSource {
  readonly name: string;
  readonly pem: string;
  readonly hashAlgorithm?: string | undefined;
}

/**
 * The public keys of `key`: every PEM key in `data`, or in every entry of the Secret (any key may
 * verify). Throws {@link PolicyCompileError} for KMS and unparsable keys; returns a
 * `SECRET_UNAVAILABLE` error (checked per admission) when the Secret is missing or empty.
 */
export function compileKeys(
  key: KeyRef,
  site: KeyRefSite,
  context: KeyRefContext,
  kms?: FetchedKmsKey,
): PolicyKey[] | SignatureCheckError {
  const sources =
    kms === undefined
      ? pemSources(key, site, context)
      : [{ name: String(key.kms), pem: kms.pem, hashAlgorithm: kms.hashAlgorithm }];
  if (sources instanceof SignatureCheckError) return sources;
  const keys: PolicyKey[] = [];
  for (const source of sources) {
    let blocks: ReturnType<typeof pemBlocks>;
    try {
      blocks = pemBlocks(source.pem);
    } catch (error) {
      throw new PolicyCompileError('INVALID_KEY', site, `${source.name}: not PEM`, { cause: error });
    }
    blocks.forEach((block, index) => {
      const name = blocks.length === 1 ? source.name : `${source.name}#${index + 1}`;
      try {
        const hashAlgorithm = source.hashAlgorithm;
        keys.push({ name, key: publicKeyFromBlock(block), ...(hashAlgorithm ? { hashAlgorithm } : {}) });
      } catch (error) {
        throw new PolicyCompileError('INVALID_KEY', site, `${name}: not a public key`, { cause: error });
      }
    });
  }
  return keys;
}

/** The DER certificates of `ca-cert` (a PEM chain inline or in a Secret). */
export function compileCertificates(
  key: KeyRef,
  site: KeyRefSite,
  context: KeyRefContext,
): Buffer[] | SignatureCheckError {
  const sources = pemSources(key, site, context);
  if (sources instanceof SignatureCheckError) return sources;
  return sources.flatMap((source) => {
    try {
      return certificateChain(source.pem);
    } catch (error) {
      throw new PolicyCompileError(
        'INVALID_CERTIFICATE',
        site,
        `${source.name}: not a PEM certificate chain`,
        {
          cause: error,
        },
      );
    }
  });
}

function pemSources(
  key: KeyRef,
  site: KeyRefSite,
  context: KeyRefContext,
): PemSource[] | SignatureCheckError {
  if (key.kms !== undefined && key.kms !== '') {
    // Only `key.kms` is fetched (by the compiler). The compiler never asks for a `ca-cert.kms`
    // (upstream ignores it: the trust root's CAs apply), so this is a caller's mistake.
    throw new PolicyCompileError(
      'UNSUPPORTED_KMS',
      site,
      `a KMS holds keys, not certificates (kms ${JSON.stringify(key.kms)}); give the CA certificate in data or in a Secret`,
    );
  }
  if (key.data !== undefined && key.data !== '') return [{ name: site.authority, pem: key.data }];
  const ref = key.secretRef;
  if (ref?.name === undefined || ref.name === '') {
    throw new PolicyCompileError('INVALID_AUTHORITY', site, 'one of data, secretRef or kms is required');
  }
  if (ref.namespace && ref.namespace !== context.secretNamespace) {
    // policy-controller refuses this at apply time: the webhook reads Secrets of its own namespace only.
    throw new PolicyCompileError(
      'INVALID_AUTHORITY',
      { ...site, path: `${site.path}.secretRef.namespace` },
      `must be the webhook's namespace ${JSON.stringify(context.secretNamespace)} (or left out), got ${JSON.stringify(ref.namespace)}`,
    );
  }
  const namespace = ref.namespace || context.secretNamespace;
  const data = context.lookupSecret?.(namespace, ref.name);
  const entries = Object.entries(data ?? {}).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) {
    return new SignatureCheckError(
      'SECRET_UNAVAILABLE',
      `Secret ${namespace}/${ref.name} ${data === undefined ? 'not found' : 'holds no data'}`,
    );
  }
  return entries.map(([entry, bytes]) => ({
    name: `${ref.name}/${entry}`,
    pem: Buffer.from(bytes).toString('utf8'),
  }));
}
