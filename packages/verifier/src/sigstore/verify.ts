// Verifies one decoded artifact against one authority's requirements, with sigstore-js doing the
// cryptography (signature, certificate chain, SCTs, SETs, inclusion proofs, RFC 3161) and Signet
// the rest: which evidence the policy asks for, identities, log-entry signers, `intoto` 0.0.1
// entries and the binding to the admitted digest.
import { type KeyObject, verify as verifyWithNode } from 'node:crypto';
import type { Bundle, TransparencyLogEntry } from '@sigstore/bundle';
import { dsse, X509Certificate } from '@sigstore/core';
import {
  PolicyError,
  type SignedEntity,
  type TrustMaterial,
  toSignedEntity,
  VerificationError,
  Verifier,
} from '@sigstore/verify';
import type { DecodedArtifact } from './decode.js';
import { type CheckCode, parsing, SignatureCheckError } from './errors.js';
import { type CompiledIdentity, certificateIdentity, matchIdentity } from './identity.js';
import {
  checkLoggedSigner,
  isIntotoV001,
  type SignerMaterial,
  spkiOfCertificate,
  verifyIntotoV001,
} from './log-entries.js';
import {
  checkSimpleSigningBinding,
  checkStatementBinding,
  type InTotoStatement,
  readStatement,
} from './payload.js';
import { type PublicKeyInfo, publicKeyFromSpki } from './pem.js';
import { leafCertificate, upstreamFields } from './upstream-fields.js';

/**
 * The evidence an authority requires besides the signature itself. Each is decided by the policy
 * (see the compiler); none is ever relaxed because an artifact lacks it.
 */
export interface Requirements {
  /** One transparency-log entry verified offline (SET or inclusion proof) against the trust root's logs. */
  readonly tlog: boolean;
  /** One RFC 3161 timestamp verified against the trust root's timestamp authorities. */
  readonly timestampAuthority: boolean;
  /** An SCT from a trusted CT log embedded in the certificate (keyless only). */
  readonly sct: boolean;
}

/** A public key of a key authority, with the name messages use for it. */
export interface PolicyKey {
  readonly name: string;
  readonly key: PublicKeyInfo;
  /** The digest this key signs with when the key fixes it (a KMS P-384 key: `sha384`). */
  readonly hashAlgorithm?: string;
}

export type SignerPolicy =
  | {
      readonly type: 'key';
      readonly keys: readonly PolicyKey[];
      /** `sha224`, `sha256`, `sha384` or `sha512`; `sha256` when undefined. Ignored for Ed25519. */
      readonly hashAlgorithm: string | undefined;
    }
  | { readonly type: 'keyless'; readonly identities: readonly CompiledIdentity[] };

/** Everything needed to verify artifacts for one authority. Built once by the policy compiler. */
export interface SignatureCheck {
  readonly signer: SignerPolicy;
  readonly requirements: Requirements;
  /** CAs, CT logs, Rekor logs and timestamp authorities, from the trust roots the authority selects. */
  readonly trust: Omit<TrustMaterial, 'publicKey'>;
}

export type SignerIdentity =
  | { readonly type: 'key'; readonly name: string; readonly fingerprint: string }
  | { readonly type: 'keyless'; readonly issuer: string; readonly subject: string };

export interface VerifiedArtifact {
  readonly source: string;
  readonly format: DecodedArtifact['format'];
  readonly signer: SignerIdentity;
  /** The in-toto Statement of a DSSE artifact; `undefined` for a simple-signing signature. */
  readonly statement: InTotoStatement | undefined;
  /** policy-controller's signature `id` (see `signatureId`). */
  readonly id: string;
  /** `sha256:<hex>` of the stored blob: policy-controller's attestation `digest`. */
  readonly digest: string;
  /** The certificate's GitHub workflow extensions (`githubWorkflowRepo`, ...); empty when keyed. */
  readonly github: Readonly<Record<string, string>>;
}

/**
 * Verifies `artifact` for `check` and its binding to `digest` (`sha256:<hex>`). Throws
 * {@link SignatureCheckError}; any exception from sigstore-js becomes one, with the original as
 * `cause` (a certificate without any timestamp makes sigstore-js throw a `TypeError`).
 */
export function verifyArtifact(
  artifact: DecodedArtifact,
  check: SignatureCheck,
  digest: string,
): VerifiedArtifact {
  const signer = verifySignature(artifact, check);
  return {
    source: artifact.source,
    format: artifact.format,
    signer,
    statement: checkBinding(artifact, digest),
    ...upstreamFields(artifact, signer.type === 'keyless'),
  };
}

/**
 * The signature, its certificate or key and the evidence the check requires, without the binding
 * to an image digest (for a message signature, sigstore-js compares the artifact's digest with
 * the signed one). Throws {@link SignatureCheckError}.
 */
export function verifySignature(artifact: DecodedArtifact, check: SignatureCheck): SignerIdentity {
  const bundle = selectEvidence(artifact.bundle, check);
  const entries: TransparencyLogEntry[] = bundle.verificationMaterial.tlogEntries;
  const intoto = entries.filter(isIntotoV001);
  const forSigstore: Bundle = {
    ...bundle,
    verificationMaterial: {
      ...bundle.verificationMaterial,
      tlogEntries: entries.filter((e) => !isIntotoV001(e)),
    },
  };
  const entity = parsing('the signature material', () => toSignedEntity(forSigstore, artifact.artifact));
  // sigstore-js parses a timestamp's time lazily, inside verification; parse it here so a time it
  // cannot read (DER drops trailing zeros of fractional seconds, sigstore-js wants exactly three
  // digits) is reported as malformed rather than as an unexpected error.
  for (const timestamp of entity.timestamps) {
    if (timestamp.$case === 'timestamp-authority')
      parsing('the RFC 3161 timestamp', () => timestamp.timestamp.signingTime);
  }
  const evidence: Evidence = { artifact, entity, intoto, check };
  return check.signer.type === 'key'
    ? verifyKeyed(evidence, check.signer.keys, check.signer.hashAlgorithm)
    : verifyKeyless(evidence, check.signer.identities, leafCertificate(bundle));
}

interface Evidence {
  readonly artifact: DecodedArtifact;
  readonly entity: SignedEntity;
  readonly intoto: readonly TransparencyLogEntry[];
  readonly check: SignatureCheck;
}

/**
 * The evidence that is checked. The policy decides which kinds are required (and a key authority
 * without `ctlog` consults no log, as upstream). RFC 3161 timestamps a keyless signature carries
 * are always checked when its trust root has timestamp authorities, required or not: an invalid
 * one fails, and a valid one dates the certificate (a Rekor v2 entry has no integrated time).
 */
function selectEvidence(bundle: Bundle, check: SignatureCheck): Bundle {
  const material = bundle.verificationMaterial;
  const { requirements } = check;
  const timestamps =
    requirements.timestampAuthority ||
    (check.signer.type === 'keyless' && check.trust.timestampAuthorities.length > 0);
  return {
    ...bundle,
    verificationMaterial: {
      ...material,
      tlogEntries: requirements.tlog ? material.tlogEntries : [],
      timestampVerificationData: timestamps ? material.timestampVerificationData : undefined,
    },
  };
}

function verifyKeyed(
  evidence: Evidence,
  keys: readonly PolicyKey[],
  hashAlgorithm: string | undefined,
): SignerIdentity {
  // The policy's hashAlgorithm wins; else the one the key fixes; else SHA-256.
  const contentFor = (candidate: PolicyKey) =>
    withHashAlgorithm(evidence, hashAlgorithm ?? candidate.hashAlgorithm);
  const chosen = keys.find((candidate) => contentFor(candidate).verifySignature(candidate.key.key));
  if (chosen === undefined) throw new SignatureCheckError('SIGNATURE_MISMATCH', keyMismatch(keys));
  const content = contentFor(chosen);
  const entity: SignedEntity = {
    ...evidence.entity,
    signature: content,
    key: { $case: 'public-key', hint: chosen.name },
  };
  verifyEvidence(
    { ...evidence, entity },
    { spki: chosen.key.spki, certificate: undefined },
    fixedKey(chosen.key.key),
  );
  return { type: 'key', name: chosen.name, fingerprint: chosen.key.fingerprint };
}

function keyMismatch(keys: readonly PolicyKey[]): string {
  const names = keys.map((key) => JSON.stringify(key.name));
  if (names.length === 1) return `signature does not match key ${names.join('')}`;
  return `signature does not match any of ${names.length} keys (${names.join(', ')})`;
}

type SignatureContent = SignedEntity['signature'];

/** The signature content verifying with the policy's hash algorithm instead of sigstore-js's default. */
function withHashAlgorithm(evidence: Evidence, hashAlgorithm: string | undefined): SignatureContent {
  const { artifact, entity } = evidence;
  const content = entity.signature;
  const signed = artifact.artifact ?? dsse.preAuthEncoding(artifact.payloadType, artifact.payload);
  return {
    signature: content.signature,
    compareSignature: (signature) => content.compareSignature(signature),
    compareDigest: (digest) => content.compareDigest(digest),
    compareSignedDigest: (digest) => content.compareSignedDigest(digest),
    verifySignature: (key) => verifyBytes(key, signed, content.signature, hashAlgorithm),
  };
}

function verifyBytes(
  key: KeyObject,
  data: Buffer,
  signature: Buffer,
  hashAlgorithm: string | undefined,
): boolean {
  const type = key.asymmetricKeyType;
  const algorithm = type === 'ed25519' || type === 'ed448' ? null : (hashAlgorithm ?? 'sha256');
  try {
    return verifyWithNode(algorithm, data, key, signature);
  } catch {
    return false;
  }
}

/** The signer's key for sigstore-js, valid at any time (policy keys have no validity period). */
function fixedKey(key: KeyObject): TrustMaterial['publicKey'] {
  return () => ({ publicKey: key, validFor: () => true });
}

function verifyKeyless(
  evidence: Evidence,
  identities: readonly CompiledIdentity[],
  certificate: Buffer | undefined,
): SignerIdentity {
  if (certificate === undefined) {
    throw new SignatureCheckError(
      'CERTIFICATE_MISSING',
      'signature has no certificate; a keyless authority needs one',
    );
  }
  const leaf = X509Certificate.parse(Buffer.from(certificate));
  if (evidence.check.requirements.sct && leaf.extSCT === undefined) {
    throw new SignatureCheckError(
      'SCT_MISSING',
      'certificate has no signed certificate timestamp (SCT); set insecureIgnoreSCT to accept such certificates',
    );
  }
  const spki = spkiOfCertificate(certificate);
  // The entity's key is the certificate: sigstore-js never asks the finder, which only completes the material.
  verifyEvidence(evidence, { spki, certificate }, fixedKey(publicKeyFromSpki(spki).key));
  const claims = certificateIdentity(leaf);
  const matched = matchIdentity(identities, claims);
  if (matched === undefined) {
    const issuer = JSON.stringify(claims.issuer ?? null);
    const subjects = JSON.stringify(claims.subjects);
    throw new SignatureCheckError(
      'IDENTITY_MISMATCH',
      `certificate identity (issuer ${issuer}, subjects ${subjects}) matches none of: ${identities.map((i) => i.description).join('; ')}`,
    );
  }
  return { type: 'keyless', issuer: matched.issuer, subject: matched.subject };
}

/** The thresholds, run through sigstore-js, plus the checks sigstore-js does not make. */
function verifyEvidence(
  evidence: Evidence,
  signer: SignerMaterial,
  publicKey: TrustMaterial['publicKey'],
): void {
  const { artifact, check, intoto } = evidence;
  const content = { payload: artifact.payload, envelope: artifact.envelope };
  for (const entry of intoto) verifyIntotoV001(entry, content, signer, check.trust.tlogs);
  const entity: SignedEntity = {
    ...evidence.entity,
    timestamps: [
      ...evidence.entity.timestamps,
      ...intoto.map((tlogEntry) => ({ $case: 'transparency-log' as const, tlogEntry })),
    ],
  };
  const certificateBased = entity.key.$case === 'certificate';
  requireEvidence(entity, intoto.length, check.requirements, certificateBased);
  const verifier = new Verifier(
    { ...check.trust, publicKey },
    {
      tlogThreshold: check.requirements.tlog ? Math.max(0, 1 - intoto.length) : 0,
      ctlogThreshold: check.requirements.sct ? 1 : 0,
      timestampThreshold: certificateBased || check.requirements.timestampAuthority ? 1 : 0,
    },
  );
  try {
    verifier.verify(entity);
  } catch (error) {
    throw fromSigstoreError(error, artifact.extraCertificates);
  }
  for (const entry of entity.tlogEntries) checkLoggedSigner(entry, signer);
}

function requireEvidence(
  entity: SignedEntity,
  intotoEntries: number,
  requirements: Requirements,
  certificateBased: boolean,
): void {
  if (requirements.tlog && entity.tlogEntries.length + intotoEntries === 0) {
    throw new SignatureCheckError(
      'TLOG_MISSING',
      'no transparency-log entry, and the authority requires one',
    );
  }
  if (requirements.timestampAuthority && !entity.timestamps.some((t) => t.$case === 'timestamp-authority')) {
    throw new SignatureCheckError(
      'TIMESTAMP_MISSING',
      'no RFC 3161 timestamp, and the authority requires one (rfc3161timestamp)',
    );
  }
  if (certificateBased && entity.timestamps.length === 0) {
    throw new SignatureCheckError(
      'TIMESTAMP_MISSING',
      'certificate-based signature without a timestamp (neither a transparency-log SET nor an RFC 3161 timestamp): its certificate cannot be checked at signing time',
    );
  }
}

const SIGSTORE_CODES: Readonly<Record<string, { readonly code: CheckCode; readonly message: string }>> = {
  SIGNATURE_ERROR: { code: 'SIGNATURE_MISMATCH', message: 'signature does not verify' },
  PUBLIC_KEY_ERROR: { code: 'SIGNATURE_MISMATCH', message: 'public key not usable' },
  CERTIFICATE_ERROR: { code: 'CERTIFICATE_ERROR', message: 'certificate not trusted' },
  TIMESTAMP_ERROR: { code: 'TIMESTAMP_ERROR', message: 'timestamp does not verify' },
  UNTRUSTED_SIGNER_ERROR: { code: 'IDENTITY_MISMATCH', message: 'signer identity' },
};

/**
 * Maps what sigstore-js throws to Signet codes, keeping it as the cause. Anything that is not a
 * sigstore-js verification or policy error with a known code (a `TypeError`, say) is a
 * `VERIFIER_ERROR`: still a denial, with its cause.
 */
export function fromSigstoreError(error: unknown, extraCertificates = 0): SignatureCheckError {
  const code = error instanceof VerificationError || error instanceof PolicyError ? error.code : '';
  const known = SIGSTORE_CODES[code] ?? (code.startsWith('TLOG') ? TLOG : undefined);
  if (known === undefined) {
    return new SignatureCheckError('VERIFIER_ERROR', 'unexpected error while verifying', { cause: error });
  }
  const note =
    known.code === 'CERTIFICATE_ERROR' && extraCertificates > 0
      ? ' (intermediate certificates come from the trust root, never from the signature)'
      : '';
  return new SignatureCheckError(known.code, `${known.message}${note}`, { cause: error });
}

const TLOG = { code: 'TLOG_ERROR', message: 'transparency-log entry does not verify' } as const;

function checkBinding(artifact: DecodedArtifact, digest: string): InTotoStatement | undefined {
  if (artifact.artifact !== undefined) {
    checkSimpleSigningBinding(artifact.payload, digest);
    return undefined;
  }
  const statement = readStatement(artifact.payloadType, artifact.payload);
  checkStatementBinding(statement, digest);
  return statement;
}
