// A verification record as stored in the cluster: a VerificationRecord (signet.dev/v1alpha1) in
// Signet's namespace saying that an image digest passed a policy, compiled with a given
// fingerprint, at a given time, verified by a given replica, signed by given identities. Each one
// carries an HMAC-SHA256, under a key only Signet reads, over every field that matters and its own
// name and namespace: an object anyone else wrote (or edited, or copied under another name) does
// not authenticate, and is never read as a pass. Parsing is strict; whatever does not parse is
// refused, never read leniently.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { PassRecord } from '@signet/core';

export const RECORD_GROUP = 'signet.dev';
export const RECORD_VERSION = 'v1alpha1';
export const RECORD_PLURAL = 'verificationrecords';
export const RECORD_KIND = 'VerificationRecord';
export const RECORD_API_VERSION = `${RECORD_GROUP}/${RECORD_VERSION}`;

/** Who signed what a record says passed (as the verifier found it). */
export type RecordSigner =
  | { readonly authority: string; readonly type: 'key'; readonly key: string; readonly fingerprint: string }
  | {
      readonly authority: string;
      readonly type: 'keyless';
      readonly issuer: string;
      readonly subject: string;
    }
  | { readonly authority: string; readonly type: 'static' };

/** What a record says. */
export interface RecordFields {
  /** `registry/repository@sha256:...`: the digest that was verified, in its repository. */
  readonly image: string;
  /** The ClusterImagePolicy's name, or the ImagePolicy's `namespace/name`. */
  readonly policy: string;
  /** The policy's fingerprint when it was verified (`sha256:...`). */
  readonly fingerprint: string;
  readonly signers: readonly RecordSigner[];
  /** Epoch milliseconds, the writer's clock. */
  readonly verifiedAt: number;
  /** The replica that verified it (its Pod name). */
  readonly verifiedBy: string;
}

/** The object as the API has it (only what Signet reads and writes). */
export interface RecordObject {
  readonly apiVersion?: unknown;
  readonly kind?: unknown;
  readonly metadata?: {
    readonly name?: unknown;
    readonly namespace?: unknown;
    readonly resourceVersion?: unknown;
    readonly creationTimestamp?: unknown;
    readonly [key: string]: unknown;
  };
  readonly spec?: unknown;
}

/** Bounds of what a record may hold, also in the CRD's schema. */
export const RECORD_LIMITS = {
  image: 4096,
  /** A ClusterImagePolicy's name, or an ImagePolicy's `namespace/name` (63 + 1 + 253). */
  policy: 317,
  text: 1024,
  signers: 16,
  verifiedBy: 253,
} as const;

const DIGEST_IMAGE = /^[^@\s]+@sha256:[0-9a-f]{64}$/;
const FINGERPRINT = /^sha256:[0-9a-f]{64}$/;
const HMAC = /^[0-9a-f]{64}$/;

/**
 * The record's name: a digest of what it is about, so that every replica writes the record of one
 * image, policy and fingerprint under one name, and a reader finds it with one lookup.
 */
export function recordName(policy: string, fingerprint: string, image: string): string {
  const digest = createHash('sha256').update(`${policy}\n${fingerprint}\n${image}`).digest('hex');
  return `vr-${digest.slice(0, 40)}`;
}

/** The signed text: a fixed order, the name and namespace included (a copy elsewhere does not verify). */
function signedText(namespace: string, name: string, fields: RecordFields): string {
  return JSON.stringify([
    RECORD_API_VERSION,
    RECORD_KIND,
    namespace,
    name,
    fields.image,
    fields.policy,
    fields.fingerprint,
    fields.signers.map(signerTuple),
    fields.verifiedAt,
    fields.verifiedBy,
  ]);
}

function signerTuple(signer: RecordSigner): string[] {
  switch (signer.type) {
    case 'key':
      return [signer.authority, signer.type, signer.key, signer.fingerprint];
    case 'keyless':
      return [signer.authority, signer.type, signer.issuer, signer.subject];
    case 'static':
      return [signer.authority, signer.type];
  }
}

function hmacOf(key: Buffer, namespace: string, name: string, fields: RecordFields): string {
  return createHmac('sha256', key)
    .update(signedText(namespace, name, fields))
    .digest('hex');
}

/** The object to write for `fields`, signed with `key`. */
export function signedRecord(key: Buffer, namespace: string, fields: RecordFields): Record<string, unknown> {
  const name = recordName(fields.policy, fields.fingerprint, fields.image);
  return {
    apiVersion: RECORD_API_VERSION,
    kind: RECORD_KIND,
    metadata: { name, namespace, labels: { 'app.kubernetes.io/managed-by': 'signet' } },
    spec: {
      image: fields.image,
      policy: fields.policy,
      fingerprint: fields.fingerprint,
      signers: fields.signers.map((s) => ({ ...s })),
      verifiedAt: new Date(fields.verifiedAt).toISOString(),
      verifiedBy: fields.verifiedBy,
      hmac: hmacOf(key, namespace, name, fields),
    },
  };
}

/** Why an object is not a record Signet wrote. */
export type RecordRejection = 'unparseable' | 'hmac';

export type ReadRecord =
  | { readonly ok: true; readonly name: string; readonly fields: RecordFields }
  | {
      readonly ok: false;
      readonly name: string;
      readonly rejection: RecordRejection;
      readonly detail: string;
    };

/**
 * The record an object holds, when it parses strictly and its HMAC verifies under `key` for its
 * own name and `namespace`; otherwise why not. Never throws.
 */
export function readRecord(key: Buffer, namespace: string, object: RecordObject): ReadRecord {
  const name = typeof object.metadata?.name === 'string' ? object.metadata.name : '';
  const refuse = (detail: string): ReadRecord => ({ ok: false, name, rejection: 'unparseable', detail });
  if (name === '') return refuse('no name');
  if (object.metadata?.namespace !== undefined && object.metadata.namespace !== namespace)
    return refuse('another namespace');
  const spec = object.spec;
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) return refuse('no spec');
  const s = spec as Record<string, unknown>;
  const image = text(s.image, RECORD_LIMITS.image);
  if (image === undefined || !DIGEST_IMAGE.test(image))
    return refuse('image is not repository@sha256:digest');
  const policy = text(s.policy, RECORD_LIMITS.policy);
  if (policy === undefined || policy === '') return refuse('no policy');
  const fingerprint = text(s.fingerprint, 71);
  if (fingerprint === undefined || !FINGERPRINT.test(fingerprint))
    return refuse('fingerprint is not sha256:hex');
  const verifiedBy = text(s.verifiedBy, RECORD_LIMITS.verifiedBy);
  if (verifiedBy === undefined) return refuse('no verifiedBy');
  const verifiedAt = typeof s.verifiedAt === 'string' ? Date.parse(s.verifiedAt) : Number.NaN;
  if (!Number.isFinite(verifiedAt)) return refuse('verifiedAt is not a time');
  const signers = signersOf(s.signers);
  if (signers === undefined) return refuse('signers do not parse');
  const hmac = typeof s.hmac === 'string' ? s.hmac : '';
  if (!HMAC.test(hmac)) return refuse('no hmac');
  const fields: RecordFields = { image, policy, fingerprint, signers, verifiedAt, verifiedBy };
  const expected = Buffer.from(hmacOf(key, namespace, name, fields), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(hmac, 'hex'))) {
    return { ok: false, name, rejection: 'hmac', detail: 'the HMAC does not verify under the records key' };
  }
  return { ok: true, name, fields };
}

function text(value: unknown, max: number): string | undefined {
  return typeof value === 'string' && value.length <= max ? value : undefined;
}

function signersOf(value: unknown): RecordSigner[] | undefined {
  if (!Array.isArray(value) || value.length > RECORD_LIMITS.signers) return undefined;
  const signers: RecordSigner[] = [];
  for (const item of value) {
    const signer = signerOf(item);
    if (signer === undefined) return undefined;
    signers.push(signer);
  }
  return signers;
}

function signerOf(item: unknown): RecordSigner | undefined {
  if (item === null || typeof item !== 'object') return undefined;
  const i = item as Record<string, unknown>;
  const authority = text(i.authority, RECORD_LIMITS.text);
  if (authority === undefined) return undefined;
  if (i.type === 'static') return { authority, type: 'static' };
  if (i.type === 'key') {
    const key = text(i.key, RECORD_LIMITS.text);
    const fingerprint = text(i.fingerprint, RECORD_LIMITS.text);
    return key === undefined || fingerprint === undefined
      ? undefined
      : { authority, type: 'key', key, fingerprint };
  }
  if (i.type === 'keyless') {
    const issuer = text(i.issuer, RECORD_LIMITS.text);
    const subject = text(i.subject, RECORD_LIMITS.text);
    return issuer === undefined || subject === undefined
      ? undefined
      : { authority, type: 'keyless', issuer, subject };
  }
  return undefined;
}

/** The fields of an authentic record that says exactly this (policy, fingerprint, image); else none. */
export function recordAbout(
  read: ReadRecord | undefined,
  policy: string,
  fingerprint: string,
  image: string,
): RecordFields | undefined {
  if (read === undefined || !read.ok) return undefined;
  const { fields } = read;
  return fields.policy === policy && fields.fingerprint === fingerprint && fields.image === image
    ? fields
    : undefined;
}

/** A record as @signet/core's stale-if-error decision reads it. */
export function passRecordOf(fields: RecordFields): PassRecord {
  const at = fields.image.lastIndexOf('@');
  return {
    repository: fields.image.slice(0, at),
    digest: fields.image.slice(at + 1),
    policy: fields.policy,
    fingerprint: fields.fingerprint,
    verifiedAt: fields.verifiedAt,
  };
}
