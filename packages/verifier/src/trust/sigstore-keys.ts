// The `sigstoreKeys` form of a TrustRoot: CAs, Rekor logs, CT logs and TSAs given inline, each
// certificate chain and public key as base64 of PEM (a Kubernetes `[]byte` field). Log IDs are
// the SHA-256 of the DER public key, as policy-controller and Rekor compute them.
import { createHash, type KeyObject } from 'node:crypto';
import type { CertificateAuthority, SigstoreKeys, TransparencyLogInstance } from '@signet/k8s-types';
import { X509Certificate } from '@sigstore/core';
import {
  HashAlgorithm,
  type CertificateAuthority as ProtoCertificateAuthority,
  type TransparencyLogInstance as ProtoTransparencyLog,
  PublicKeyDetails,
  type TrustedRoot,
} from '@sigstore/protobuf-specs';
import { decodeBase64, pemBlocks, publicKeyFromBlock } from '../sigstore/pem.js';
import { TrustRootError } from './errors.js';

const TRUSTED_ROOT_MEDIA_TYPE = 'application/vnd.dev.sigstore.trustedroot+json;version=0.1';
// The CRD has no validity periods; like policy-controller, everything is valid from the epoch on.
const BEGINNING = new Date(0);

/** Builds a TrustedRoot from `spec.sigstoreKeys`. Throws {@link TrustRootError} naming the field. */
export function trustedRootFromSigstoreKeys(name: string, keys: SigstoreKeys): TrustedRoot {
  const within = <T>(path: string, build: () => T): T => {
    try {
      return build();
    } catch (error) {
      throw new TrustRootError(
        'TRUST_ROOT_INVALID',
        name,
        `spec.sigstoreKeys.${path}: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  };
  return {
    mediaType: TRUSTED_ROOT_MEDIA_TYPE,
    certificateAuthorities: keys.certificateAuthorities.map((ca, i) =>
      within(`certificateAuthorities[${i}]`, () => certificateAuthority(ca)),
    ),
    tlogs: (keys.tLogs ?? []).map((log, i) => within(`tLogs[${i}]`, () => transparencyLog(log))),
    ctlogs: (keys.ctLogs ?? []).map((log, i) => within(`ctLogs[${i}]`, () => transparencyLog(log))),
    timestampAuthorities: (keys.timestampAuthorities ?? []).map((tsa, i) =>
      within(`timestampAuthorities[${i}]`, () => certificateAuthority(tsa)),
    ),
  };
}

function certificateAuthority(ca: CertificateAuthority): ProtoCertificateAuthority {
  return {
    subject: { organization: ca.subject?.organization ?? '', commonName: ca.subject?.commonName ?? '' },
    uri: ca.uri ?? '',
    certChain: {
      certificates: certificateChain(base64Pem(ca.certChain, 'certChain')).map((rawBytes) => ({ rawBytes })),
    },
    validFor: { start: BEGINNING },
    operator: '',
  };
}

/** DER certificates of a PEM chain, in order. */
export function certificateChain(pem: string): Buffer[] {
  return pemBlocks(pem).map((block) => {
    if (block.label !== 'CERTIFICATE') throw new Error(`expected CERTIFICATE blocks, got "${block.label}"`);
    X509Certificate.parse(block.der);
    return block.der;
  });
}

function transparencyLog(log: TransparencyLogInstance): ProtoTransparencyLog {
  const blocks = pemBlocks(base64Pem(log.publicKey, 'publicKey'));
  const [block] = blocks;
  if (block === undefined || blocks.length !== 1)
    throw new Error(`publicKey must hold one key, got ${blocks.length}`);
  const key = publicKeyFromBlock(block);
  return {
    baseUrl: log.baseURL ?? '',
    hashAlgorithm: hashAlgorithmOf(log.hashAlgorithm),
    publicKey: { rawBytes: key.spki, keyDetails: keyDetailsOf(key.key), validFor: { start: BEGINNING } },
    logId: { keyId: createHash('sha256').update(key.spki).digest() },
    checkpointKeyId: undefined,
    operator: '',
  };
}

function base64Pem(value: string, field: string): string {
  try {
    return decodeBase64(value).toString('utf8');
  } catch (error) {
    throw new Error(`${field} must be base64 of PEM`, { cause: error });
  }
}

function hashAlgorithmOf(name: string | undefined): HashAlgorithm {
  switch (name?.toLowerCase()) {
    case 'sha384':
    case 'sha-384':
      return HashAlgorithm.SHA2_384;
    case 'sha512':
    case 'sha-512':
      return HashAlgorithm.SHA2_512;
    default:
      return HashAlgorithm.SHA2_256;
  }
}

const CURVES: Readonly<Record<string, PublicKeyDetails>> = {
  prime256v1: PublicKeyDetails.PKIX_ECDSA_P256_SHA_256,
  secp384r1: PublicKeyDetails.PKIX_ECDSA_P384_SHA_384,
  secp521r1: PublicKeyDetails.PKIX_ECDSA_P521_SHA_512,
};

/**
 * The key details sigstore-js reads the raw key bytes with. RSA keys are left unspecified on
 * purpose: sigstore-js parses `PKIX_RSA_PKCS1V*` details as PKCS#1, but the bytes here are SPKI.
 */
function keyDetailsOf(key: KeyObject): PublicKeyDetails {
  if (key.asymmetricKeyType === 'ed25519') return PublicKeyDetails.PKIX_ED25519;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  return (curve === undefined ? undefined : CURVES[curve]) ?? PublicKeyDetails.PUBLIC_KEY_DETAILS_UNSPECIFIED;
}
