// A private "Sigstore" for the keyless scenarios, made in-process with node:crypto: a Fulcio-like CA
// that certifies an ephemeral key for an OIDC identity (subject alternative name and Fulcio's issuer
// extensions), and a Rekor-like log key that signs entry timestamps (SETs). cosign cannot sign
// keyless offline, so the scenarios build cosign's legacy `.sig` layer with this material.
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import {
  bitString,
  boolean,
  explicit,
  implicitPrimitive,
  objectIdentifier,
  octetString,
  sequence,
  set,
  unsignedInteger,
  utcTime,
  utf8String,
} from './der.js';

const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';
const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  codeSigning: '1.3.6.1.5.5.7.3.3',
  /** Fulcio's issuer extension, original form: the raw issuer URL. */
  fulcioIssuerV1: '1.3.6.1.4.1.57264.1.1',
  /** Fulcio's issuer extension since 2022: a DER UTF8String. */
  fulcioIssuerV2: '1.3.6.1.4.1.57264.1.8',
} as const;

/** The OIDC identity a certificate is issued to. */
export interface KeylessIdentity {
  readonly issuer: string;
  /** A URI (workflow, SPIFFE ID) or an email address. */
  readonly subject: string;
}

export interface CertifiedSigner {
  readonly privateKey: KeyObject;
  readonly certificatePem: string;
}

/** cosign's `dev.sigstore.cosign/bundle` annotation: a Rekor entry with its signed timestamp. */
export interface SignedEntry {
  readonly annotation: string;
  readonly integratedTime: number;
}

export interface TestSigstore {
  readonly caCertificatePem: string;
  readonly rekorPublicKeyPem: string;
  /** An ephemeral P-256 key with a 10-minute certificate for `identity`, as Fulcio issues. */
  certify(identity: KeylessIdentity): CertifiedSigner;
  /** Logs a `hashedrekord` entry for `signature` over `payload` and returns the SET annotation. */
  logHashedRekord(payload: Buffer, signature: Buffer, certificatePem: string): SignedEntry;
  /** A `TrustRoot` (`sigstoreKeys`) trusting this CA and log. */
  trustRoot(name: string): object;
}

const CA_NAME = { organization: 'signet-e2e', commonName: 'signet-e2e-fulcio' };

function pem(der: Buffer, label: string): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

function distinguishedName(name: { organization: string; commonName: string }): Buffer {
  const attribute = (oid: string, value: string) => set(sequence(objectIdentifier(oid), utf8String(value)));
  return sequence(attribute(OID.organization, name.organization), attribute(OID.commonName, name.commonName));
}

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  return sequence(objectIdentifier(oid), ...(critical ? [boolean(true)] : []), octetString(value));
}

/** SHA-1 of the subjectPublicKey bits (the uncompressed EC point), as RFC 5280 suggests. */
function keyIdentifier(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: 'jwk' });
  const point = Buffer.concat([
    Buffer.from([4]),
    Buffer.from(jwk.x ?? '', 'base64url'),
    Buffer.from(jwk.y ?? '', 'base64url'),
  ]);
  return createHash('sha1').update(point).digest();
}

interface CertificateFields {
  readonly issuer: Buffer;
  readonly subject: Buffer;
  readonly publicKey: KeyObject;
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly extensions: readonly Buffer[];
  readonly signingKey: KeyObject;
}

function certificate(fields: CertificateFields): Buffer {
  const algorithm = sequence(objectIdentifier(ECDSA_WITH_SHA256));
  const tbs = sequence(
    explicit(0, unsignedInteger(Buffer.from([2]))),
    unsignedInteger(Buffer.concat([Buffer.from([0x01]), randomBytes(15)])),
    algorithm,
    fields.issuer,
    sequence(utcTime(fields.notBefore), utcTime(fields.notAfter)),
    fields.subject,
    fields.publicKey.export({ format: 'der', type: 'spki' }),
    explicit(3, sequence(...fields.extensions)),
  );
  const signature = sign('sha256', tbs, fields.signingKey);
  return sequence(tbs, algorithm, bitString(signature));
}

/** Canonical JSON (sorted keys, no whitespace): what Rekor signs. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A fresh CA (valid a day) and log key. */
export function createTestSigstore(now = new Date()): TestSigstore {
  const ca = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const rekor = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const caName = distinguishedName(CA_NAME);
  const caKeyId = keyIdentifier(ca.publicKey);
  const caDer = certificate({
    issuer: caName,
    subject: caName,
    publicKey: ca.publicKey,
    notBefore: new Date(now.getTime() - 60 * 60_000),
    notAfter: new Date(now.getTime() + 24 * 60 * 60_000),
    signingKey: ca.privateKey,
    extensions: [
      extension(OID.basicConstraints, true, sequence(boolean(true))),
      // keyCertSign (bit 5) and cRLSign (bit 6).
      extension(OID.keyUsage, true, bitString(Buffer.from([0x06]), 1)),
      extension(OID.subjectKeyIdentifier, false, octetString(caKeyId)),
    ],
  });
  const caCertificatePem = pem(caDer, 'CERTIFICATE');
  const rekorSpki = rekor.publicKey.export({ format: 'der', type: 'spki' });
  const rekorPublicKeyPem = pem(rekorSpki, 'PUBLIC KEY');
  const logId = createHash('sha256').update(rekorSpki).digest('hex');
  let logIndex = 0;

  return {
    caCertificatePem,
    rekorPublicKeyPem,
    certify: (identity) => {
      const key = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const issued = new Date();
      const subjectName =
        identity.subject.includes('@') && !identity.subject.includes('://')
          ? implicitPrimitive(1, Buffer.from(identity.subject, 'utf8')) // rfc822Name
          : implicitPrimitive(6, Buffer.from(identity.subject, 'utf8')); // uniformResourceIdentifier
      const der = certificate({
        issuer: caName,
        // Fulcio leaves have an empty subject; the identity is in the (critical) SAN.
        subject: sequence(),
        publicKey: key.publicKey,
        notBefore: new Date(issued.getTime() - 60_000),
        notAfter: new Date(issued.getTime() + 10 * 60_000),
        signingKey: ca.privateKey,
        extensions: [
          // digitalSignature (bit 0).
          extension(OID.keyUsage, true, bitString(Buffer.from([0x80]), 7)),
          extension(OID.extKeyUsage, false, sequence(objectIdentifier(OID.codeSigning))),
          extension(OID.authorityKeyIdentifier, false, sequence(implicitPrimitive(0, caKeyId))),
          extension(OID.subjectAltName, true, sequence(subjectName)),
          extension(OID.fulcioIssuerV1, false, Buffer.from(identity.issuer, 'utf8')),
          extension(OID.fulcioIssuerV2, false, utf8String(identity.issuer)),
        ],
      });
      return { privateKey: key.privateKey, certificatePem: pem(der, 'CERTIFICATE') };
    },
    logHashedRekord: (payload, signature, certificatePem) => {
      const body = canonicalJson({
        apiVersion: '0.0.1',
        kind: 'hashedrekord',
        spec: {
          data: { hash: { algorithm: 'sha256', value: createHash('sha256').update(payload).digest('hex') } },
          signature: {
            content: signature.toString('base64'),
            publicKey: { content: Buffer.from(certificatePem).toString('base64') },
          },
        },
      });
      const entry = {
        body: Buffer.from(body).toString('base64'),
        integratedTime: Math.floor(Date.now() / 1000),
        logID: logId,
        logIndex: logIndex++,
      };
      const set = sign('sha256', Buffer.from(canonicalJson(entry)), rekor.privateKey);
      return {
        annotation: JSON.stringify({ SignedEntryTimestamp: set.toString('base64'), Payload: entry }),
        integratedTime: entry.integratedTime,
      };
    },
    trustRoot: (name) => ({
      apiVersion: 'policy.sigstore.dev/v1alpha1',
      kind: 'TrustRoot',
      metadata: { name },
      spec: {
        sigstoreKeys: {
          certificateAuthorities: [
            {
              subject: CA_NAME,
              uri: 'https://fulcio.signet-e2e.test',
              certChain: Buffer.from(caCertificatePem).toString('base64'),
            },
          ],
          tLogs: [
            {
              baseURL: 'https://rekor.signet-e2e.test',
              hashAlgorithm: 'sha-256',
              publicKey: Buffer.from(rekorPublicKeyPem).toString('base64'),
            },
          ],
        },
      },
    }),
  };
}
