// Addresses a registry must not be able to send the webhook to. A registry chooses its token realm
// and its redirect targets; pointed at 169.254.169.254 (cloud metadata) or an in-cluster service,
// it would turn the admission webhook into a proxy into the cluster network (SSRF).
//
// IP literals are decided here, on the URL: WHATWG URL parsing has already turned every spelling
// (`127.1`, `0x7f000001`, `[::ffff:127.0.0.1]`) into its canonical form, and IPv6 forms that carry
// an IPv4 address (mapped, translated, compatible, NAT64, 6to4, Teredo) are judged by that
// address. `localhost` and `*.localhost` are loopback by definition (RFC 6761). Every other name
// is decided when it is resolved, at connect time, on every address it resolves to
// (`guardedLookup` in `../net/lookup.ts`): a name's answer can change between a check and the
// connection, the connection's own lookup cannot.
import { BlockList, isIP } from 'node:net';

const PRIVATE_V4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", includes the unspecified address
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT, common for cluster networks
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments (DS-Lite, NAT64 discovery)
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking, used inside some clouds
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
] as const) {
  PRIVATE_V4.addSubnet(network, prefix, 'ipv4');
}

const PRIVATE_V6 = new BlockList();
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): whatever it embeds, it is a local network
  ['100::', 64], // discard-only
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routed by some)
  ['ff00::', 8], // multicast
] as const) {
  PRIVATE_V6.addSubnet(network, prefix, 'ipv6');
}

/** True when `hostname` (a URL's, brackets and all) is a loopback, private or link-local IP literal. */
export function isPrivateAddress(hostname: string): boolean {
  const address = hostname.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(address);
  if (family === 4) return PRIVATE_V4.check(address, 'ipv4');
  if (family === 0) return false;
  if (PRIVATE_V6.check(address, 'ipv6')) return true;
  return embeddedIPv4(ipv6Bytes(address)).some((v4) => PRIVATE_V4.check(v4, 'ipv4'));
}

/** `localhost` and its subdomains, which resolve to loopback whatever DNS says (RFC 6761). */
export function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** The IPv4 addresses an IPv6 address stands for, by the transition mechanism its prefix names. */
function embeddedIPv4(bytes: Uint8Array): string[] {
  const v4 = (offset: number, xor = 0) =>
    Array.from(bytes.subarray(offset, offset + 4), (byte) => byte ^ xor).join('.');
  const zeros = (from: number, to: number) => bytes.subarray(from, to).every((byte) => byte === 0);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const word = (index: number) => view.getUint16(index * 2);
  // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated), ::a.b.c.d (compatible)
  if (zeros(0, 10) && word(5) === 0xffff) return [v4(12)];
  if (zeros(0, 8) && word(4) === 0xffff && word(5) === 0) return [v4(12)];
  if (zeros(0, 12)) return [v4(12)];
  // 64:ff9b::/96, NAT64's well-known prefix (RFC 6052)
  if (word(0) === 0x64 && word(1) === 0xff9b && zeros(4, 12)) return [v4(12)];
  // 2002::/16, 6to4 (RFC 3056)
  if (word(0) === 0x2002) return [v4(2)];
  // 2001:0::/32, Teredo (RFC 4380): the server, and the client stored inverted
  if (word(0) === 0x2001 && word(1) === 0) return [v4(4), v4(12, 0xff)];
  return [];
}

/** The 16 bytes of a valid IPv6 address (as `isIP` accepts it, with an optional dotted tail). */
function ipv6Bytes(address: string): Uint8Array {
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const words = (part: string) =>
    part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16));
  const left = words(head);
  const right = tail === undefined ? [] : words(tail);
  const all = [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = new Uint8Array(16);
  all.forEach((value, index) => {
    bytes[index * 2] = value >> 8;
    bytes[index * 2 + 1] = value & 0xff;
  });
  return bytes;
}
