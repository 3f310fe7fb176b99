// Just enough DER to write X.509 certificates for the keyless scenarios: node:crypto signs and
// parses certificates but does not create them.

/** Tag, length, value. */
export function tlv(tag: number, ...content: readonly Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export const sequence = (...content: readonly Buffer[]): Buffer => tlv(0x30, ...content);
export const set = (...content: readonly Buffer[]): Buffer => tlv(0x31, ...content);
export const octetString = (data: Buffer): Buffer => tlv(0x04, data);
export const utf8String = (text: string): Buffer => tlv(0x0c, Buffer.from(text, 'utf8'));
export const boolean = (value: boolean): Buffer => tlv(0x01, Buffer.from([value ? 0xff : 0x00]));
/** `[n] EXPLICIT` */
export const explicit = (n: number, ...content: readonly Buffer[]): Buffer => tlv(0xa0 | n, ...content);
/** `[n] IMPLICIT` of a primitive type, e.g. a GeneralName. */
export const implicitPrimitive = (n: number, data: Buffer): Buffer => tlv(0x80 | n, data);

/** A BIT STRING of whole bytes, or of `bits` leading bits of `data` (the rest unused). */
export function bitString(data: Buffer, unusedBits = 0): Buffer {
  return tlv(0x03, Buffer.from([unusedBits]), data);
}

/** A non-negative INTEGER from big-endian bytes. */
export function unsignedInteger(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const trimmed = bytes.subarray(start);
  const needsPad = (trimmed[0] ?? 0) & 0x80;
  return tlv(0x02, needsPad ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

export function objectIdentifier(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const [first = 0, second = 0, ...rest] = arcs;
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const groups = [arc & 0x7f];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128)) {
      groups.unshift((value & 0x7f) | 0x80);
    }
    bytes.push(...groups);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime (`YYMMDDHHMMSSZ`), valid for the years 1950 to 2049 as X.509 requires. */
export function utcTime(date: Date): Buffer {
  const iso = date.toISOString(); // 2026-11-30T21:55:40.123Z
  const text = `${iso.slice(2, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return tlv(0x17, Buffer.from(text, 'ascii'));
}
