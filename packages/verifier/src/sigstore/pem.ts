// PEM, base64 and public-key helpers shared by trust roots, policy keys and signature parsing.
// They throw plain `Error`s; each caller wraps them in its own error type with the context it knows.
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';

/** Bytes backed by a plain `ArrayBuffer`, as `Buffer.from` makes them and sigstore-js wants them. */
export type Bytes = Buffer<ArrayBuffer>;

/** One `-----BEGIN <label>-----` block, decoded. */
export interface PemBlock {
  readonly label: string;
  readonly der: Bytes;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END ([A-Z0-9 ]+)-----/g;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const PEM_HEADER_LINE = /^[A-Za-z-]+:.*$/gm;

/** Decodes standard base64 (whitespace allowed), rejecting anything else instead of skipping it. */
export function decodeBase64(text: string): Bytes {
  const compact = text.replace(/\s+/g, '');
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) throw new Error('not valid base64');
  return Buffer.from(compact, 'base64');
}

/** Every PEM block of `text`, in order. Throws when there is none or a block is malformed. */
export function pemBlocks(text: string): PemBlock[] {
  const blocks: PemBlock[] = [];
  for (const match of text.matchAll(PEM_BLOCK)) {
    const [, label = '', body = '', end] = match;
    if (label !== end) throw new Error(`PEM block "${label}" ends with "${end}"`);
    // Encrypted PEM (Proc-Type headers) never holds public material; drop header lines anyway.
    const der = decodeBase64(body.replace(PEM_HEADER_LINE, ''));
    if (der.length === 0) throw new Error(`PEM block "${label}" is empty`);
    blocks.push({ label, der });
  }
  if (blocks.length === 0) throw new Error('no PEM block found');
  return blocks;
}

/** Encodes DER as PEM with 64-character lines. */
export function toPem(der: Uint8Array, label: string): string {
  const lines =
    Buffer.from(der)
      .toString('base64')
      .match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/** A public key and the two ways Signet names it. */
export interface PublicKeyInfo {
  readonly key: KeyObject;
  /** DER SubjectPublicKeyInfo, normalized by re-encoding. */
  readonly spki: Buffer;
  /** `sha256:<hex>` of the SPKI: stable across PEM spellings of the same key. */
  readonly fingerprint: string;
}

/** Reads a `PUBLIC KEY` (SPKI) or `RSA PUBLIC KEY` (PKCS#1) block. */
export function publicKeyFromBlock(block: PemBlock): PublicKeyInfo {
  if (block.label === 'PUBLIC KEY')
    return publicKeyInfo(createPublicKey({ key: block.der, format: 'der', type: 'spki' }));
  if (block.label === 'RSA PUBLIC KEY') {
    return publicKeyInfo(createPublicKey({ key: block.der, format: 'der', type: 'pkcs1' }));
  }
  throw new Error(`expected a PUBLIC KEY block, got "${block.label}"`);
}

/** Parses DER SPKI bytes. */
export function publicKeyFromSpki(spki: Uint8Array): PublicKeyInfo {
  return publicKeyInfo(createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' }));
}

export function publicKeyInfo(key: KeyObject): PublicKeyInfo {
  const spki = key.export({ format: 'der', type: 'spki' });
  return { key, spki, fingerprint: `sha256:${sha256Hex(spki)}` };
}

export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
