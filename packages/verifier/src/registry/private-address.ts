// Addresses a registry must not be able to send the webhook to. A registry chooses its token realm
// and its redirect targets; pointed at 169.254.169.254 (cloud metadata) or an in-cluster service,
// it would turn the admission webhook into a proxy into the cluster network (SSRF). WHATWG URL
// parsing has already turned every spelling of an IP literal (`127.1`, `0x7f000001`,
// `[::ffff:127.0.0.1]`) into its canonical form, so checking `url.hostname` is enough. DNS names
// are not checked: that needs network policy, not a client.
import { BlockList, isIP } from 'node:net';

const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", includes the unspecified address
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT, common for cluster networks
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 24], // link-local multicast
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff02::', 16], // link-local multicast
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** True when `hostname` (a URL's, brackets and all) is a loopback, private or link-local IP literal. */
export function isPrivateAddress(hostname: string): boolean {
  const address = hostname.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(address);
  if (family === 0) return false;
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}
