// Real signing material for tests, offline: node:crypto keys, and @sigstore/mock's CA (with a CT
// log issuing SCTs), Rekor (SETs and inclusion proofs) and TSA (RFC 3161 timestamps). Legacy
// cosign layers are built exactly as cosign writes them; bundles with @sigstore/sign's builders.
import {
  createHash,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign as signWithNode,
} from 'node:crypto';
import { type Bundle, bundleToJSON, type TransparencyLogEntry } from '@sigstore/bundle';
import { initializeCA, initializeCTLog, initializeTLog, initializeTSA } from '@sigstore/mock';

type CA = Awaited<ReturnType<typeof initializeCA>>;
type CTLog = Awaited<ReturnType<typeof initializeCTLog>>;
type TLog = Awaited<ReturnType<typeof initializeTLog>>;
type TSA = Awaited<ReturnType<typeof initializeTSA>>;

import { DSSEBundleBuilder, MessageSignatureBundleBuilder, type Signer, type Witness } from '@sigstore/sign';
import type { BundleArtifact, LegacyAttestation, LegacySignature } from '../../src/artifacts.js';
import { toPem } from '../../src/sigstore/pem.js';
import { type CompiledTrustRoot, trustRootFromJSON } from '../../src/trust/trusted-root.js';

export const REKOR_URL = 'https://rekor.mock.test';
export const GITHUB_ISSUER = 'https://token.actions.githubusercontent.com';
export const WORKFLOW = 'https://github.com/acme/app/.github/workflows/release.yml@refs/heads/main';
export const REPO = 'registry.example/acme/app';
export const DIGEST = `sha256:${'a'.repeat(64)}`;
export const OTHER_DIGEST = `sha256:${'b'.repeat(64)}`;
const OID_ISSUER_V2 = '1.3.6.1.4.1.57264.1.8';
const SHA256_OID = '2.16.840.1.101.3.4.2.1';

export interface KeyPair {
  readonly publicKey: KeyObject;
  readonly privateKey: KeyObject;
}

export function ecKeyPair(curve = 'P-256'): KeyPair {
  return generateKeyPairSync('ec', { namedCurve: curve });
}

export function publicPem(key: KeyPair | KeyObject): string {
  const publicKey = 'publicKey' in key ? key.publicKey : key;
  return publicKey.export({ format: 'pem', type: 'spki' }).toString();
}

/** Signs like cosign: ECDSA/RSA over `hash` (sha256), Ed25519 pure. */
export function signBytes(key: KeyPair, data: Uint8Array, hash = 'sha256'): Buffer {
  const type = key.privateKey.asymmetricKeyType;
  return signWithNode(type === 'ed25519' ? null : hash, data, key.privateKey);
}

/** Mock Sigstore services sharing one time base. */
export interface Infra {
  readonly ca: CA;
  readonly ctlog: CTLog;
  readonly tlog: TLog;
  readonly tsa: TSA;
  readonly keys: {
    readonly ca: KeyPair;
    readonly ctlog: KeyPair;
    readonly tlog: KeyPair;
    readonly tsa: KeyPair;
  };
  /** A TrustedRoot JSON document trusting all four. */
  readonly trustedRootJSON: Record<string, unknown>;
  readonly trustRoot: CompiledTrustRoot;
}

export interface InfraOptions {
  /** Time the CA issues certificates at (valid 10 minutes) and the CT log stamps SCTs. */
  readonly caClock?: Date;
  /** Time the transparency log integrates entries at. */
  readonly tlogClock?: Date;
  readonly tsaClock?: Date;
  /** Issue certificates with an SCT (default true). */
  readonly sct?: boolean;
}

/**
 * The services' default time: whole seconds (sigstore-js cannot parse fractional RFC 3161 times),
 * two seconds ahead so that the mock CA and TSA roots, created "now" with second precision, are
 * already valid at it.
 */
export function serviceTime(): Date {
  return new Date(Math.floor(Date.now() / 1000) * 1000 + 2000);
}

export async function makeInfra(options: InfraOptions = {}): Promise<Infra> {
  const keys = { ca: ecKeyPair(), ctlog: ecKeyPair(), tlog: ecKeyPair(), tsa: ecKeyPair() };
  const time = serviceTime();
  const ctlog = await initializeCTLog(keys.ctlog, options.caClock ?? time);
  const ca = await initializeCA(keys.ca, options.sct === false ? undefined : ctlog, options.caClock ?? time);
  const tlog = await initializeTLog(REKOR_URL, keys.tlog, options.tlogClock ?? time);
  const tsa = await initializeTSA(keys.tsa, options.tsaClock ?? time);
  const trustedRootJSON = trustedRootDocument({ ca, ctlog, tlog, tsa });
  return {
    ca,
    ctlog,
    tlog,
    tsa,
    keys,
    trustedRootJSON,
    trustRoot: trustRootFromJSON(trustedRootJSON, { name: 'mock' }),
  };
}

const b64 = (bytes: ArrayBufferView) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
const EPOCH = '1970-01-01T00:00:00Z';

export function trustedRootDocument(parts: {
  readonly ca?: CA;
  readonly ctlog?: CTLog;
  readonly tlog?: TLog;
  readonly tsa?: TSA;
}): Record<string, unknown> {
  const log = (publicKey: Buffer, baseUrl: string) => ({
    baseUrl,
    hashAlgorithm: 'SHA2_256',
    publicKey: {
      rawBytes: b64(publicKey),
      keyDetails: 'PKIX_ECDSA_P256_SHA_256',
      validFor: { start: EPOCH },
    },
    logId: { keyId: b64(createHash('sha256').update(publicKey).digest()) },
  });
  return {
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    certificateAuthorities: parts.ca
      ? [
          {
            uri: 'https://fulcio.mock.test',
            certChain: { certificates: [{ rawBytes: b64(parts.ca.rootCertificate) }] },
            validFor: { start: EPOCH },
          },
        ]
      : [],
    ctlogs: parts.ctlog ? [log(parts.ctlog.publicKey, 'https://ctfe.mock.test')] : [],
    tlogs: parts.tlog ? [log(parts.tlog.publicKey, REKOR_URL)] : [],
    timestampAuthorities: parts.tsa
      ? [
          {
            uri: 'https://tsa.mock.test',
            certChain: {
              certificates: [
                { rawBytes: b64(parts.tsa.intCertificate) },
                { rawBytes: b64(parts.tsa.rootCertificate) },
              ],
            },
            validFor: { start: EPOCH },
          },
        ]
      : [],
  };
}

/** An ephemeral key and its Fulcio-style certificate. */
export interface CertifiedKey extends KeyPair {
  readonly certificate: Buffer;
  readonly certificatePem: string;
}

export async function certify(
  ca: CA,
  identity: { readonly san?: string; readonly issuer?: string | null; readonly key?: KeyPair } = {},
): Promise<CertifiedKey> {
  const key = identity.key ?? ecKeyPair();
  const issued = await ca.issueCertificate({
    publicKey: key.publicKey.export({ format: 'der', type: 'spki' }),
    subjectAltName: identity.san ?? WORKFLOW,
    extensions:
      identity.issuer === null ? [] : [{ oid: OID_ISSUER_V2, value: identity.issuer ?? GITHUB_ISSUER }],
  });
  const certificate = Buffer.from(issued.buffer, issued.byteOffset, issued.byteLength);
  return { ...key, certificate, certificatePem: toPem(certificate, 'CERTIFICATE') };
}

export function simpleSigningPayload(digest = DIGEST, repo = REPO): Buffer {
  return Buffer.from(
    JSON.stringify({
      critical: {
        identity: { 'docker-reference': repo },
        image: { 'docker-manifest-digest': digest },
        type: 'cosign container image signature',
      },
      optional: null,
    }),
  );
}

export function statement(predicateType: string, predicate: unknown, digest = DIGEST): Buffer {
  return Buffer.from(
    JSON.stringify({
      _type: 'https://in-toto.io/Statement/v0.1',
      predicateType,
      subject: [{ name: REPO, digest: { sha256: digest.slice('sha256:'.length) } }],
      predicate,
    }),
  );
}

/** A Rekor entry for `body`, as the mock log returns it. */
export interface LoggedEntry {
  readonly body: string;
  readonly integratedTime: number;
  readonly logID: string;
  readonly logIndex: number;
  readonly verification: {
    readonly signedEntryTimestamp: string;
    readonly inclusionProof: {
      readonly logIndex: number;
      readonly treeSize: number;
      readonly rootHash: string;
      readonly hashes: string[];
      readonly checkpoint: string;
    };
  };
}

export async function logEntry(tlog: TLog, body: object): Promise<LoggedEntry> {
  const response = (await tlog.log(body)) as unknown as Record<string, LoggedEntry>;
  const entry = Object.values(response)[0];
  if (entry === undefined) throw new Error('mock Rekor returned no entry');
  return entry;
}

/** cosign's `dev.sigstore.cosign/bundle` annotation for a Rekor entry. */
export function setAnnotation(entry: LoggedEntry): string {
  return JSON.stringify({
    SignedEntryTimestamp: entry.verification.signedEntryTimestamp,
    Payload: {
      body: entry.body,
      integratedTime: entry.integratedTime,
      logIndex: entry.logIndex,
      logID: entry.logID,
    },
  });
}

/** A bundle `TransparencyLogEntry` for a Rekor entry, with SET and inclusion proof. */
export function tlogEntry(entry: LoggedEntry, withPromise = true, withProof = true): TransparencyLogEntry {
  const body = JSON.parse(Buffer.from(entry.body, 'base64').toString('utf8')) as {
    kind: string;
    apiVersion: string;
  };
  const proof = entry.verification.inclusionProof;
  return {
    logIndex: String(entry.logIndex),
    logId: { keyId: Buffer.from(entry.logID, 'hex') },
    kindVersion: { kind: body.kind, version: body.apiVersion },
    integratedTime: String(entry.integratedTime),
    inclusionPromise: withPromise
      ? { signedEntryTimestamp: Buffer.from(entry.verification.signedEntryTimestamp, 'base64') }
      : undefined,
    inclusionProof: withProof
      ? {
          logIndex: String(proof.logIndex),
          treeSize: String(proof.treeSize),
          rootHash: Buffer.from(proof.rootHash, 'hex'),
          hashes: proof.hashes.map((h) => Buffer.from(h, 'hex')),
          checkpoint: { envelope: proof.checkpoint },
        }
      : undefined,
    canonicalizedBody: Buffer.from(entry.body, 'base64'),
  };
}

export function hashedRekordBody(payload: Uint8Array, signature: Uint8Array, signerPem: string): object {
  return {
    apiVersion: '0.0.1',
    kind: 'hashedrekord',
    spec: {
      data: { hash: { algorithm: 'sha256', value: createHash('sha256').update(payload).digest('hex') } },
      signature: {
        content: b64(signature),
        publicKey: { content: Buffer.from(signerPem).toString('base64') },
      },
    },
  };
}

/** Rekor's canonical `intoto` 0.0.1 body; without `payload`, as Rekor wrote it before 2022 (no payloadHash). */
export function intotoV001Body(
  envelope: Uint8Array,
  payload: Uint8Array | undefined,
  signerPem: string,
): object {
  const hash = (data: Uint8Array) => ({
    algorithm: 'sha256',
    value: createHash('sha256').update(data).digest('hex'),
  });
  return {
    apiVersion: '0.0.1',
    kind: 'intoto',
    spec: {
      content:
        payload === undefined
          ? { hash: hash(envelope) }
          : { hash: hash(envelope), payloadHash: hash(payload) },
      publicKey: Buffer.from(signerPem).toString('base64'),
    },
  };
}

export function dsseV001Body(payload: Uint8Array, signature: Uint8Array, signerPem: string): object {
  return {
    apiVersion: '0.0.1',
    kind: 'dsse',
    spec: {
      payloadHash: { algorithm: 'sha256', value: createHash('sha256').update(payload).digest('hex') },
      signatures: [{ signature: b64(signature), verifier: Buffer.from(signerPem).toString('base64') }],
    },
  };
}

/** An RFC 3161 token over `signature` (cosign stamps the raw signature bytes). */
export async function timestampToken(tsa: TSA, signature: Uint8Array): Promise<Buffer> {
  const token = await tsa.timestamp({
    artifactHash: createHash('sha256').update(signature).digest(),
    hashAlgorithmOID: SHA256_OID,
    nonce: randomBytes(4).readUInt32BE(0),
    policyOID: '1.2.3.4',
    certReq: false,
  });
  return Buffer.from(token.buffer, token.byteOffset, token.byteLength);
}

export interface LegacyOptions {
  /** Annotations to add or override (`undefined` removes one). */
  readonly annotations?: Readonly<Record<string, string | undefined>>;
  readonly source?: string;
}

/** A `.sig` layer exactly as cosign writes it. */
export function legacySignature(
  payload: Uint8Array,
  signature: Uint8Array,
  options: LegacyOptions & {
    readonly certificatePem?: string;
    readonly chainPem?: string;
    readonly set?: string;
    readonly rfc3161?: Uint8Array;
  } = {},
): LegacySignature {
  const annotations: Record<string, string> = { 'dev.cosignproject.cosign/signature': b64(signature) };
  if (options.certificatePem !== undefined)
    annotations['dev.sigstore.cosign/certificate'] = options.certificatePem;
  if (options.chainPem !== undefined) annotations['dev.sigstore.cosign/chain'] = options.chainPem;
  if (options.set !== undefined) annotations['dev.sigstore.cosign/bundle'] = options.set;
  if (options.rfc3161 !== undefined)
    annotations['dev.sigstore.cosign/rfc3161timestamp'] = JSON.stringify({
      SignedRFC3161Timestamp: b64(options.rfc3161),
    });
  return {
    format: 'legacy-signature',
    source: options.source ?? `${REPO}:sha256-aaaa.sig`,
    payload,
    annotations: applyOverrides(annotations, options.annotations),
  };
}

export interface Envelope {
  readonly json: Buffer;
  readonly payload: Buffer;
  readonly signature: Buffer;
}

/** A DSSE envelope over `payload` (an in-toto statement), as cosign attest writes it. */
export function dsseEnvelope(
  key: KeyPair,
  payload: Buffer,
  payloadType = 'application/vnd.in-toto+json',
): Envelope {
  const pae = Buffer.concat([
    Buffer.from(`DSSEv1 ${Buffer.byteLength(payloadType)} ${payloadType} ${payload.length} `),
    payload,
  ]);
  const signature = signBytes(key, pae);
  const json = Buffer.from(
    JSON.stringify({ payloadType, payload: b64(payload), signatures: [{ keyid: '', sig: b64(signature) }] }),
  );
  return { json, payload, signature };
}

/** A `.att` layer exactly as cosign writes it. */
export function legacyAttestation(
  envelope: Envelope,
  options: LegacyOptions & { readonly certificatePem?: string; readonly set?: string } = {},
): LegacyAttestation {
  const annotations: Record<string, string> = { 'dev.cosignproject.cosign/signature': '' };
  if (options.certificatePem !== undefined)
    annotations['dev.sigstore.cosign/certificate'] = options.certificatePem;
  if (options.set !== undefined) annotations['dev.sigstore.cosign/bundle'] = options.set;
  return {
    format: 'legacy-attestation',
    source: options.source ?? `${REPO}:sha256-aaaa.att`,
    envelope: envelope.json,
    annotations: applyOverrides(annotations, options.annotations),
  };
}

function applyOverrides(
  base: Record<string, string>,
  overrides: Readonly<Record<string, string | undefined>> | undefined,
): Record<string, string> {
  const out = { ...base };
  for (const [key, value] of Object.entries(overrides ?? {})) {
    if (value === undefined) delete out[key];
    else out[key] = value;
  }
  return out;
}

/** @sigstore/sign signer over a certified (keyless) or plain key. */
export function signerFor(key: KeyPair | CertifiedKey): Signer {
  return {
    sign: async (data) => ({
      signature: signBytes(key, data),
      key:
        'certificatePem' in key
          ? { $case: 'x509Certificate', certificate: key.certificatePem }
          : { $case: 'publicKey', publicKey: publicPem(key), hint: 'signet-test' },
    }),
  };
}

/** A witness logging to the mock Rekor, as @sigstore/sign's RekorWitness would (Rekor v1 entries). */
export function rekorWitness(tlog: TLog, kind: 'dsse' | 'hashedrekord' = 'dsse'): Witness {
  return {
    testify: async (content, publicKey) => {
      let body: object;
      if (content.$case === 'dsseEnvelope') {
        const envelope = content.dsseEnvelope;
        const signature = envelope.signatures[0]?.sig ?? Buffer.alloc(0);
        body = dsseV001Body(envelope.payload, signature, publicKey);
      } else {
        if (kind !== 'hashedrekord') throw new Error('message signatures are logged as hashedrekord');
        const message = content.messageSignature;
        body = {
          apiVersion: '0.0.1',
          kind: 'hashedrekord',
          spec: {
            data: { hash: { algorithm: 'sha256', value: message.messageDigest?.digest.toString('hex') } },
            signature: {
              content: b64(message.signature),
              publicKey: { content: Buffer.from(publicKey).toString('base64') },
            },
          },
        };
      }
      return { tlogEntries: [tlogEntry(await logEntry(tlog, body))] };
    },
  };
}

/** A witness stamping the signature with the mock TSA. */
export function tsaWitness(tsa: TSA): Witness {
  return {
    testify: async (content) => {
      const signature =
        content.$case === 'dsseEnvelope'
          ? (content.dsseEnvelope.signatures[0]?.sig ?? Buffer.alloc(0))
          : content.messageSignature.signature;
      return { rfc3161Timestamps: [{ signedTimestamp: await timestampToken(tsa, signature) }] };
    },
  };
}

export async function dsseBundle(
  key: KeyPair | CertifiedKey,
  payload: Buffer,
  witnesses: Witness[],
  certificateChain = false,
): Promise<Bundle> {
  const builder = new DSSEBundleBuilder({ signer: signerFor(key), witnesses, certificateChain });
  return builder.create({ data: payload, type: 'application/vnd.in-toto+json' });
}

export async function messageBundle(
  key: KeyPair | CertifiedKey,
  data: Buffer,
  witnesses: Witness[],
): Promise<Bundle> {
  return new MessageSignatureBundleBuilder({ signer: signerFor(key), witnesses }).create({ data });
}

export function bundleArtifact(bundle: Bundle | object, predicateType?: string): BundleArtifact {
  const json = 'content' in bundle ? bundleToJSON(bundle as Bundle) : bundle;
  return {
    format: 'bundle',
    source: `${REPO}@sha256:${'c'.repeat(64)}`,
    bundle: Buffer.from(JSON.stringify(json)),
    artifactType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
    predicateType,
  };
}
