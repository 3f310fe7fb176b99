// The one rule for hosts someone other than the operator chose: which are listed, which are
// refused before any connection, and which dispatcher a request gets. Connections themselves are
// tested against real servers (remote-policy-guard.test.ts, tuf-outbound.test.ts, registry tests).
import { describe, expect, it } from 'vitest';
import { PrivateAddressError } from '../../src/net/lookup.js';
import { OutboundNetwork } from '../../src/net/outbound.js';

describe('OutboundNetwork', () => {
  const network = new OutboundNetwork({
    privateHosts: ['Mirror.Corp', 'tuf.corp:8080', 'policy.corp:443', '10.0.0.9:8443'],
  });

  it('matches listed hosts with and without their default port', () => {
    expect(network.isListed(new URL('https://mirror.corp/x'))).toBe(true);
    expect(network.isListed(new URL('https://mirror.corp:443/x'))).toBe(true);
    expect(network.isListed(new URL('http://mirror.corp/x'))).toBe(true);
    expect(network.isListed(new URL('https://mirror.corp:8443/x'))).toBe(false);
    expect(network.isListed(new URL('http://tuf.corp:8080/x'))).toBe(true);
    expect(network.isListed(new URL('http://tuf.corp/x'))).toBe(false);
    expect(network.isListed(new URL('https://policy.corp/x'))).toBe(true);
    expect(network.isListed(new URL('https://10.0.0.9:8443/x'))).toBe(true);
    expect(network.isListed(new URL('memory://mirror.corp/x'))).toBe(true);
    expect(network.isListed(new URL('memory://other.corp/x'))).toBe(false);
  });

  it('refuses private literals and localhost unless the operator chose or listed them', async () => {
    for (const url of [
      'https://127.0.0.1/',
      'http://169.254.169.254/',
      'https://[::1]:8443/',
      'https://a.localhost/',
    ]) {
      expect(network.refuses(new URL(url))).toBe(true);
      expect(network.refuses(new URL(url), 'operator')).toBe(false);
      await expect(network.dispatcherFor(new URL(url))).rejects.toBeInstanceOf(PrivateAddressError);
    }
    expect(network.refuses(new URL('https://10.0.0.9:8443/'))).toBe(false);
    expect(network.refuses(new URL('https://mirror.example/'))).toBe(false);
    await expect(network.dispatcherFor(new URL('https://10.0.0.1/'))).rejects.toThrow(
      '10.0.0.1 is a loopback, private or link-local address',
    );
  });

  it('gives the direct dispatcher to chosen and listed hosts, the guarded one to the rest', async () => {
    const direct = await network.dispatcherFor(new URL('https://127.0.0.1/'), 'operator');
    expect(await network.dispatcherFor(new URL('https://mirror.corp/'))).toBe(direct);
    const guarded = await network.dispatcherFor(new URL('https://mirror.example/'));
    expect(guarded).not.toBe(direct);
    expect(await network.dispatcherFor(new URL('https://other.example/'))).toBe(guarded);
    await network.close();
    await new OutboundNetwork().close();
  });
});
