// What sigstore-js does not check about transparency-log entries, Signet checks here:
// - the key or certificate a log entry names must be the one that made the signature (sigstore-js
//   compares the signature and digest, not the signer: a log entry for the same bytes signed by
//   another key would otherwise count);
// - `intoto` 0.0.1 entries (old `cosign attest`) are rejected by sigstore-js; their SET and body
//   are verified here, offline, against the trust root's Rekor keys.
import { createHash } from 'node:crypto';
import type { TransparencyLogEntry } from '@sigstore/bundle';
import { crypto, json, X509Certificate } from '@sigstore/core';
import { Entry } from '@sigstore/protobuf-specs/rekor/v2';
import type { TrustMaterial } from '@sigstore/verify';
import { SignatureCheckError } from './errors.js';
import { decodeBase64, type PemBlock, pemBlocks, publicKeyFromBlock, publicKeyFromSpki } from './pem.js';

/** The signer of a verified signature: its key, and its certificate when keyless. */
export interface SignerMaterial {
  /** DER SubjectPublicKeyInfo, normalized. */
  readonly spki: Buffer;
  /** DER leaf certificate; `undefined` for a plain key. */
  readonly certificate: Buffer | undefined;
}

/** What a log entry's body says made the signature. */
type LoggedSigner = { readonly certificate: Buffer } | { readonly spki: Buffer };

/** Throws `TLOG_SIGNER_MISMATCH` unless the entry names `signer` (its certificate, or its key). */
export function checkLoggedSigner(entry: TransparencyLogEntry, signer: SignerMaterial): void {
  const logged = loggedSigner(entry);
  const same =
    'certificate' in logged
      ? signer.certificate === undefined
        ? spkiOfCertificate(logged.certificate).equals(signer.spki)
        : logged.certificate.equals(signer.certificate)
      : logged.spki.equals(signer.spki);
  if (!same) {
    throw new SignatureCheckError(
      'TLOG_SIGNER_MISMATCH',
      `transparency-log entry ${entry.logIndex} names another ${'certificate' in logged ? 'certificate' : 'key'} than the signer's`,
    );
  }
}

function loggedSigner(entry: TransparencyLogEntry): LoggedSigner {
  const { kind, version } = entry.kindVersion;
  try {
    const body = JSON.parse(entry.canonicalizedBody.toString('utf8')) as BodyJson;
    const signer = version === '0.0.2' && kind !== 'intoto' ? v2Signer(body) : v1Signer(kind, body);
    if (signer !== undefined) return signer;
  } catch (error) {
    throw new SignatureCheckError('TLOG_ERROR', `cannot read the signer of a ${kind} ${version} log entry`, {
      cause: error,
    });
  }
  throw new SignatureCheckError(
    'TLOG_ERROR',
    `a ${kind} ${version} log entry names no signer Signet can compare`,
  );
}

// Loose view of the Rekor v1 bodies; every access is checked by `loggedPem`.
interface BodyJson {
  readonly spec?: {
    readonly signature?: { readonly publicKey?: { readonly content?: unknown } };
    readonly signatures?: readonly { readonly verifier?: unknown }[];
    readonly publicKey?: unknown;
    readonly content?: {
      readonly envelope?: { readonly signatures?: readonly { readonly publicKey?: unknown }[] };
    };
  };
}

function v1Signer(kind: string, body: BodyJson): LoggedSigner | undefined {
  const spec = body.spec;
  switch (kind) {
    case 'hashedrekord':
      return loggedPem(spec?.signature?.publicKey?.content);
    case 'dsse':
      return spec?.signatures?.length === 1 ? loggedPem(spec.signatures[0]?.verifier) : undefined;
    case 'intoto':
      return loggedPem(spec?.publicKey ?? spec?.content?.envelope?.signatures?.[0]?.publicKey);
    default:
      return undefined;
  }
}

/** Rekor v1 bodies hold base64 of a PEM public key or certificate. */
function loggedPem(value: unknown): LoggedSigner | undefined {
  if (typeof value !== 'string') return undefined;
  // pemBlocks throws rather than return no block.
  const block = pemBlocks(decodeBase64(value).toString('utf8'))[0] as PemBlock;
  return block.label === 'CERTIFICATE'
    ? { certificate: block.der }
    : { spki: publicKeyFromBlock(block).spki };
}

/** Rekor v2 bodies hold a `Verifier` message with DER bytes. */
function v2Signer(body: unknown): LoggedSigner | undefined {
  const spec = Entry.fromJSON(body).spec?.spec;
  const signatures =
    spec?.$case === 'hashedRekordV002'
      ? [spec.hashedRekordV002.signature]
      : spec?.$case === 'dsseV002'
        ? spec.dsseV002.signatures
        : [];
  if (signatures.length !== 1) return undefined;
  const verifier = signatures[0]?.verifier?.verifier;
  if (verifier?.$case === 'x509Certificate') return { certificate: verifier.x509Certificate.rawBytes };
  if (verifier?.$case === 'publicKey') return { spki: publicKeyFromSpki(verifier.publicKey.rawBytes).spki };
  return undefined;
}

export function spkiOfCertificate(der: Buffer): Buffer {
  return publicKeyFromSpki(X509Certificate.parse(Buffer.from(der)).publicKey).spki;
}

/** True for the log entries sigstore-js cannot verify and Signet verifies itself. */
export function isIntotoV001(entry: TransparencyLogEntry): boolean {
  return entry.kindVersion.kind === 'intoto' && entry.kindVersion.version === '0.0.1';
}

/** What an `intoto` 0.0.1 entry is checked against. */
export interface IntotoContent {
  /** The DSSE payload (the in-toto statement). */
  readonly payload: Buffer;
  /** The envelope exactly as stored in the `.att` layer (and as cosign uploaded it), when known. */
  readonly envelope: Buffer | undefined;
}

/**
 * Verifies an `intoto` 0.0.1 entry offline: its SET against one of `tlogs` (matched by log ID
 * and valid at the integrated time), its body against the content, and its public key or
 * certificate against `signer`. Rekor's canonical body has always held `content.hash` (SHA-256 of
 * the envelope as uploaded) and, since 2022, `content.payloadHash` (SHA-256 of the payload): one
 * of them must match. Returns the integrated time. Throws {@link SignatureCheckError}
 * (`TLOG_ERROR`, `TLOG_SIGNER_MISMATCH`).
 */
export function verifyIntotoV001(
  entry: TransparencyLogEntry,
  content: IntotoContent,
  signer: SignerMaterial,
  tlogs: TrustMaterial['tlogs'],
): Date {
  if (entry.inclusionPromise === undefined) {
    throw new SignatureCheckError('TLOG_ERROR', 'intoto 0.0.1 log entry without a signed entry timestamp');
  }
  const integratedTime = new Date(Number(entry.integratedTime) * 1000);
  const signed = Buffer.from(
    json.canonicalize({
      body: entry.canonicalizedBody.toString('base64'),
      integratedTime: Number(entry.integratedTime),
      logIndex: Number(entry.logIndex),
      logID: entry.logId.keyId.toString('hex'),
    }),
    'utf8',
  );
  const sct = entry.inclusionPromise.signedEntryTimestamp;
  const verified = tlogs.some(
    (log) =>
      log.logID.equals(entry.logId.keyId) &&
      log.validFor.start <= integratedTime &&
      integratedTime <= log.validFor.end &&
      crypto.verify(signed, log.publicKey, sct),
  );
  if (!verified) {
    throw new SignatureCheckError(
      'TLOG_ERROR',
      'intoto 0.0.1 log entry: signed entry timestamp does not verify',
    );
  }
  checkIntotoContent(entry, content);
  checkLoggedSigner(entry, signer);
  return integratedTime;
}

interface HashJson {
  readonly algorithm?: unknown;
  readonly value?: unknown;
}

function checkIntotoContent(entry: TransparencyLogEntry, content: IntotoContent): void {
  let logged: { hash?: HashJson; payloadHash?: HashJson } | undefined;
  try {
    const body = JSON.parse(entry.canonicalizedBody.toString('utf8')) as {
      spec?: { content?: { hash?: HashJson; payloadHash?: HashJson } };
    };
    logged = body.spec?.content;
  } catch (error) {
    throw new SignatureCheckError('TLOG_ERROR', 'intoto 0.0.1 log entry body is not JSON', { cause: error });
  }
  const matches = (hash: HashJson | undefined, data: Buffer | undefined) =>
    data !== undefined &&
    hash?.algorithm === 'sha256' &&
    hash.value === createHash('sha256').update(data).digest('hex');
  if (!matches(logged?.payloadHash, content.payload) && !matches(logged?.hash, content.envelope)) {
    throw new SignatureCheckError('TLOG_ERROR', 'intoto 0.0.1 log entry is for another envelope');
  }
}
