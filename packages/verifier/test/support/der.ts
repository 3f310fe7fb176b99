// A minimal DER encoder, to make certificates @sigstore/mock cannot (email, DNS and username
// subject alternative names; no or old-style Fulcio issuer extensions). Signed with node:crypto.
import { generateKeyPairSync, sign } from 'node:crypto';

export function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const length =
    body.length < 0x80
      ? Buffer.from([body.length])
      : body.length < 0x100
        ? Buffer.from([0x81, body.length])
        : Buffer.from([0x82, body.length >> 8, body.length & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, body]);
}

export const sequence = (...content: Buffer[]) => tlv(0x30, ...content);
export const utf8 = (text: string) => tlv(0x0c, Buffer.from(text));
export const octets = (data: Buffer) => tlv(0x04, data);

export function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const groups = [arc & 0x7f];
    for (let value = arc >> 7; value > 0; value >>= 7) groups.unshift((value & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** Subject alternative names: `[1]` email, `[2]` DNS, `[6]` URI, `[7]` IP, `[0]` otherName. */
export const san = {
  email: (value: string) => tlv(0x81, Buffer.from(value)),
  dns: (value: string) => tlv(0x82, Buffer.from(value)),
  uri: (value: string) => tlv(0x86, Buffer.from(value)),
  ip: (bytes: number[]) => tlv(0x87, Buffer.from(bytes)),
  otherName: (type: string, value: string) => tlv(0xa0, oid(type), tlv(0xa0, utf8(value))),
};

export interface Extension {
  readonly oid: string;
  readonly value: Buffer;
}

const name = (cn: string) => sequence(tlv(0x31, sequence(oid('2.5.4.3'), utf8(cn))));
const ECDSA_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));

/** A self-signed leaf certificate with the given extensions (SAN as a list of general names). */
export function certificate(options: {
  readonly sans?: readonly Buffer[];
  readonly extensions?: readonly Extension[];
}): Buffer {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const extensions = [...(options.extensions ?? [])];
  if (options.sans !== undefined) extensions.push({ oid: '2.5.29.17', value: sequence(...options.sans) });
  const tbs = sequence(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))),
    tlv(0x02, Buffer.from([1])),
    ECDSA_SHA256,
    name('test'),
    sequence(tlv(0x17, Buffer.from('250101000000Z')), tlv(0x17, Buffer.from('350101000000Z'))),
    name('test'),
    publicKey.export({ format: 'der', type: 'spki' }),
    tlv(0xa3, sequence(...extensions.map((e) => sequence(oid(e.oid), octets(e.value))))),
  );
  const signature = sign('sha256', tbs, privateKey);
  return sequence(tbs, ECDSA_SHA256, tlv(0x03, Buffer.from([0]), signature));
}
