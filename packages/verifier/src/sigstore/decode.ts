// Turns what the registry layer found into sigstore-js bundles. Legacy cosign layers become the
// bundle sigstore-js would have read had cosign written one: a `.sig` layer a message-signature
// bundle over the simple-signing payload, a `.att` layer a DSSE bundle; the Rekor SET annotation
// becomes an inclusion promise and the RFC 3161 annotation a timestamp. Nothing is trusted here.
import { createHash } from 'node:crypto';
import {
  BUNDLE_V01_MEDIA_TYPE,
  type Bundle,
  bundleFromJSON,
  type TransparencyLogEntry,
  type VerificationMaterial,
} from '@sigstore/bundle';
import { RFC3161Timestamp, X509Certificate } from '@sigstore/core';
import { HashAlgorithm } from '@sigstore/protobuf-specs';
import type { BundleArtifact, FoundArtifact, LegacyAttestation, LegacySignature } from '../artifacts.js';
import { parsing, SignatureCheckError } from './errors.js';
import { decodeBase64, pemBlocks } from './pem.js';

export const ANNOTATION_SIGNATURE = 'dev.cosignproject.cosign/signature';
export const ANNOTATION_CERTIFICATE = 'dev.sigstore.cosign/certificate';
export const ANNOTATION_CHAIN = 'dev.sigstore.cosign/chain';
export const ANNOTATION_BUNDLE = 'dev.sigstore.cosign/bundle';
export const ANNOTATION_RFC3161 = 'dev.sigstore.cosign/rfc3161timestamp';

/** A found artifact as a sigstore-js bundle plus the signed content, not yet verified. */
export interface DecodedArtifact {
  readonly source: string;
  readonly format: FoundArtifact['format'];
  readonly bundle: Bundle;
  /** The message-signature artifact (a legacy `.sig` payload); `undefined` for DSSE. */
  readonly artifact: Buffer | undefined;
  /** What the signature vouches for: the simple-signing JSON or the DSSE payload. */
  readonly payload: Buffer;
  /** The DSSE payload type; `''` for a message signature. */
  readonly payloadType: string;
  /** A legacy `.att` layer's envelope bytes, exactly as stored (Rekor `intoto` 0.0.1 entries hash them). */
  readonly envelope: Buffer | undefined;
  /** Certificates the artifact carries beyond the leaf. Never trusted: intermediates come from the trust root. */
  readonly extraCertificates: number;
  /**
   * The signature as policy-controller reads it off the stored artifact, for its signature `id`:
   * a `.sig` layer's signature annotation, a `.att` layer's (which cosign leaves empty: the
   * signature is inside the envelope), a bundle's DSSE signature.
   */
  readonly layerSignature: Buffer;
  /** `sha256:<hex>` of the stored blob (payload, envelope or bundle layer): policy-controller's attestation `digest`. */
  readonly blobDigest: string;
}

/** Throws {@link SignatureCheckError} (`MALFORMED_ARTIFACT`, `UNSUPPORTED_ARTIFACT`). */
export function decodeArtifact(found: FoundArtifact): DecodedArtifact {
  switch (found.format) {
    case 'legacy-signature':
      return decodeLegacySignature(found);
    case 'legacy-attestation':
      return decodeLegacyAttestation(found);
    case 'bundle':
      return decodeBundle(found);
  }
}

function decodeLegacySignature(found: LegacySignature): DecodedArtifact {
  const encoded = found.annotations[ANNOTATION_SIGNATURE];
  if (encoded === undefined || encoded === '') {
    throw new SignatureCheckError(
      'MALFORMED_ARTIFACT',
      `signature layer has no ${ANNOTATION_SIGNATURE} annotation`,
    );
  }
  const signature = parsing(`the ${ANNOTATION_SIGNATURE} annotation`, () => decodeBase64(encoded));
  const payload = Buffer.from(found.payload);
  const digest = createHash('sha256').update(payload).digest();
  const blobDigest = `sha256:${digest.toString('hex')}`;
  const material = legacyMaterial(found.annotations);
  const bundle: Bundle = {
    mediaType: BUNDLE_V01_MEDIA_TYPE,
    verificationMaterial: material,
    content: {
      $case: 'messageSignature',
      messageSignature: { messageDigest: { algorithm: HashAlgorithm.SHA2_256, digest }, signature },
    },
  };
  return {
    source: found.source,
    format: found.format,
    bundle,
    artifact: payload,
    payload,
    payloadType: '',
    envelope: undefined,
    extraCertificates: chainExtra(material),
    layerSignature: signature,
    blobDigest,
  };
}

function decodeLegacyAttestation(found: LegacyAttestation): DecodedArtifact {
  const envelope = parsing('the DSSE envelope', () => readEnvelope(Buffer.from(found.envelope)));
  const material = legacyMaterial(found.annotations);
  const bundle: Bundle = {
    mediaType: BUNDLE_V01_MEDIA_TYPE,
    verificationMaterial: material,
    content: { $case: 'dsseEnvelope', dsseEnvelope: envelope },
  };
  return {
    source: found.source,
    format: found.format,
    bundle,
    artifact: undefined,
    payload: envelope.payload,
    payloadType: envelope.payloadType,
    envelope: Buffer.from(found.envelope),
    extraCertificates: chainExtra(material),
    layerSignature: annotatedSignature(found.annotations),
    blobDigest: sha256Digest(found.envelope),
  };
}

function decodeBundle(found: BundleArtifact): DecodedArtifact {
  const bundle = parsing('the Sigstore bundle', () =>
    bundleFromJSON(JSON.parse(Buffer.from(found.bundle).toString('utf8'))),
  );
  if (bundle.content.$case !== 'dsseEnvelope') {
    throw new SignatureCheckError(
      'UNSUPPORTED_ARTIFACT',
      'message-signature bundle: it carries no payload naming the image, only DSSE bundles can be bound to a digest',
    );
  }
  const envelope = bundle.content.dsseEnvelope;
  return {
    source: found.source,
    format: found.format,
    bundle,
    artifact: undefined,
    payload: envelope.payload,
    payloadType: envelope.payloadType,
    envelope: undefined,
    extraCertificates: chainExtra(bundle.verificationMaterial),
    layerSignature: Buffer.concat(envelope.signatures.slice(0, 1).map((signature) => signature.sig)),
    blobDigest: sha256Digest(found.bundle),
  };
}

function sha256Digest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** A `.att` layer's signature annotation: cosign writes it empty; a malformed one counts as empty. */
function annotatedSignature(annotations: Readonly<Record<string, string>>): Buffer {
  try {
    return decodeBase64(annotations[ANNOTATION_SIGNATURE] ?? '');
  } catch {
    return Buffer.alloc(0);
  }
}

type Envelope = Extract<Bundle['content'], { $case: 'dsseEnvelope' }>['dsseEnvelope'];

function readEnvelope(bytes: Buffer): Envelope {
  const json: unknown = JSON.parse(bytes.toString('utf8'));
  const object = record(json, 'envelope');
  const payloadType = text(object.payloadType, 'payloadType');
  const payload = decodeBase64(text(object.payload, 'payload'));
  if (!Array.isArray(object.signatures)) throw new Error('signatures must be a list');
  if (object.signatures.length !== 1) {
    throw new SignatureCheckError(
      'UNSUPPORTED_ARTIFACT',
      `DSSE envelope with ${object.signatures.length} signatures; exactly one is supported`,
    );
  }
  const signature = record(object.signatures[0], 'signatures[0]');
  const sig = decodeBase64(text(signature.sig, 'signatures[0].sig'));
  if (payload.length === 0 || sig.length === 0) throw new Error('empty payload or signature');
  const keyid = signature.keyid === undefined ? '' : text(signature.keyid, 'signatures[0].keyid');
  return { payloadType, payload, signatures: [{ sig, keyid }] };
}

function legacyMaterial(annotations: Readonly<Record<string, string>>): VerificationMaterial & {
  tlogEntries: TransparencyLogEntry[];
} {
  const set = annotations[ANNOTATION_BUNDLE];
  const tsa = annotations[ANNOTATION_RFC3161];
  return {
    content: legacyKey(annotations),
    tlogEntries:
      set === undefined || set === ''
        ? []
        : [parsing(`the ${ANNOTATION_BUNDLE} annotation`, () => setEntry(set))],
    timestampVerificationData: {
      rfc3161Timestamps:
        tsa === undefined || tsa === ''
          ? []
          : [parsing(`the ${ANNOTATION_RFC3161} annotation`, () => tsaTimestamp(tsa))],
    },
  };
}

function legacyKey(annotations: Readonly<Record<string, string>>): VerificationMaterial['content'] {
  const leafPem = annotations[ANNOTATION_CERTIFICATE];
  if (leafPem === undefined || leafPem.trim() === '') return { $case: 'publicKey', publicKey: { hint: '' } };
  const leaf = parsing(`the ${ANNOTATION_CERTIFICATE} annotation`, () => certificates(leafPem));
  if (leaf.length !== 1) {
    throw new SignatureCheckError(
      'MALFORMED_ARTIFACT',
      `the ${ANNOTATION_CERTIFICATE} annotation holds ${leaf.length} certificates, expected 1`,
    );
  }
  const chainPem = annotations[ANNOTATION_CHAIN];
  const chain =
    chainPem === undefined || chainPem.trim() === ''
      ? []
      : parsing(`the ${ANNOTATION_CHAIN} annotation`, () => certificates(chainPem));
  return {
    $case: 'x509CertificateChain',
    x509CertificateChain: { certificates: [...leaf, ...chain].map((rawBytes) => ({ rawBytes })) },
  };
}

function certificates(pem: string): Buffer[] {
  return pemBlocks(pem).map((block) => {
    if (block.label !== 'CERTIFICATE') throw new Error(`expected CERTIFICATE blocks, got "${block.label}"`);
    X509Certificate.parse(block.der);
    return block.der;
  });
}

const HEX_LOG_ID = /^[0-9a-fA-F]{64}$/;

/** cosign's `{"SignedEntryTimestamp", "Payload": {"body", "integratedTime", "logIndex", "logID"}}`. */
function setEntry(json: string): TransparencyLogEntry {
  const set = record(JSON.parse(json), 'bundle');
  const payload = record(set.Payload, 'Payload');
  const signedEntryTimestamp = decodeBase64(text(set.SignedEntryTimestamp, 'SignedEntryTimestamp'));
  const canonicalizedBody = decodeBase64(text(payload.body, 'Payload.body'));
  const integratedTime = integer(payload.integratedTime, 'Payload.integratedTime');
  const logIndex = integer(payload.logIndex, 'Payload.logIndex');
  const logID = text(payload.logID, 'Payload.logID');
  if (!HEX_LOG_ID.test(logID)) throw new Error('Payload.logID must be 64 hexadecimal characters');
  const body = record(JSON.parse(canonicalizedBody.toString('utf8')), 'Payload.body');
  return {
    logIndex: String(logIndex),
    logId: { keyId: Buffer.from(logID, 'hex') },
    kindVersion: { kind: text(body.kind, 'body.kind'), version: text(body.apiVersion, 'body.apiVersion') },
    integratedTime: String(integratedTime),
    inclusionPromise: { signedEntryTimestamp },
    inclusionProof: undefined,
    canonicalizedBody,
  };
}

function tsaTimestamp(json: string): { signedTimestamp: Buffer } {
  const object = record(JSON.parse(json), 'rfc3161timestamp');
  const signedTimestamp = decodeBase64(text(object.SignedRFC3161Timestamp, 'SignedRFC3161Timestamp'));
  RFC3161Timestamp.parse(signedTimestamp);
  return { signedTimestamp };
}

function chainExtra(material: VerificationMaterial | undefined): number {
  const content = material?.content;
  return content?.$case === 'x509CertificateChain' ? content.x509CertificateChain.certificates.length - 1 : 0;
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${what} must be an object`);
  return value as Record<string, unknown>;
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new Error(`${what} must be a string`);
  return value;
}

function integer(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new Error(`${what} must be a non-negative integer`);
  }
  return value;
}
