import { describe, expect, it } from 'vitest';
import { isPrivateAddress } from '../../src/registry/private-address.js';

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
});
