import { describe, expect, it } from 'vitest';
import { isPrivateAddress } from '../../src/net/private-address.js';

describe('isPrivateAddress', () => {
  it.each([
    ['http://127.0.0.1/', true],
    ['http://127.1/', true],
    ['http://0x7f000001/', true],
    ['http://2130706433/', true],
    ['http://0/', true],
    ['http://10.20.30.40/', true],
    ['http://100.64.0.1/', true],
    ['http://169.254.169.254/', true],
    ['http://172.16.0.1/', true],
    ['http://172.32.0.1/', false],
    ['http://192.168.1.1/', true],
    ['http://224.0.0.251/', true],
    ['http://8.8.8.8/', false],
    ['http://[::1]/', true],
    ['http://[::]/', true],
    ['http://[::ffff:127.0.0.1]/', true],
    ['http://[::ffff:169.254.169.254]/', true],
    ['http://[fd00:ec2::254]/', true],
    ['http://[fe80::1]/', true],
    ['http://[ff02::1]/', true],
    ['http://[2001:4860:4860::8888]/', false],
    ['http://localhost/', false],
    ['http://registry.example/', false],
  ])('%s: %s', (url, expected) => {
    expect(isPrivateAddress(new URL(url).hostname)).toBe(expected);
  });

  it.each([
    // NAT64 (RFC 6052 well-known and local-use prefixes) of loopback, metadata and a private address
    ['http://[64:ff9b::7f00:1]/', true],
    ['http://[64:ff9b::a9fe:a9fe]/', true],
    ['http://[64:ff9b:1::a00:1]/', true],
    ['http://[64:ff9b::808:808]/', false],
    // 6to4 (RFC 3056): the IPv4 address sits in bits 16-47
    ['http://[2002:7f00:1::]/', true],
    ['http://[2002:a9fe:a9fe::1]/', true],
    ['http://[2002:808:808::]/', false],
    // IPv4-compatible (deprecated) and IPv4-translated forms
    ['http://[::7f00:1]/', true],
    ['http://[::ffff:0:a9fe:a9fe]/', true],
    // Teredo (RFC 4380): the client's IPv4 address is stored inverted in the last 32 bits
    ['http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', true],
    // reserved, benchmarking and broadcast IPv4 ranges
    ['http://198.18.0.1/', true],
    ['http://240.0.0.1/', true],
    ['http://255.255.255.255/', true],
    ['http://192.0.0.8/', true],
  ])('embedded and reserved forms, issue 9 item 7: %s: %s', (url, expected) => {
    expect(isPrivateAddress(new URL(url).hostname)).toBe(expected);
  });
});

describe('isPrivateAddress on resolver answers', () => {
  it.each([
    ['::ffff:10.1.2.3', true],
    ['64:ff9b::169.254.169.254', true],
    ['64:ff9b::8.8.8.8', false],
    ['fe80::1%eth0', true],
  ])('%s: %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });
});
