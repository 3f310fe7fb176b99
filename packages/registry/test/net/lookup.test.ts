import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { describe, expect, it } from 'vitest';
import { guardedLookup, PrivateAddressError } from '../../src/net/lookup.js';

/** Calls a LookupFunction the way net.connect does and returns what it answered. */
function resolve(lookup: LookupFunction, hostname: string, all: boolean) {
  return new Promise<{ error: Error | null; address: unknown; family: unknown }>((done) => {
    lookup(hostname, { all }, (error, address, family) => done({ error, address, family }));
  });
}

/** An underlying lookup answering from a fixed list (always asked for all addresses). */
function answering(addresses: LookupAddress[] | Error): LookupFunction {
  return (_hostname, options, callback) => {
    expect(options.all).toBe(true);
    if (addresses instanceof Error) callback(addresses as NodeJS.ErrnoException, '', 0);
    else (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
  };
}

describe('guardedLookup', () => {
  it('passes public addresses on, as one address or all of them', async () => {
    const addresses = [
      { address: '8.8.8.8', family: 4 },
      { address: '2001:4860:4860::8888', family: 6 },
    ];
    const lookup = guardedLookup(answering(addresses));
    expect(await resolve(lookup, 'registry.example', false)).toEqual({
      error: null,
      address: '8.8.8.8',
      family: 4,
    });
    expect((await resolve(lookup, 'registry.example', true)).address).toEqual(addresses);
  });

  it('refuses a name when any of its addresses is private', async () => {
    const lookup = guardedLookup(
      answering([
        { address: '8.8.8.8', family: 4 },
        { address: '10.1.2.3', family: 4 },
      ]),
    );
    const { error } = await resolve(lookup, 'rebind.example', false);
    expect(error).toBeInstanceOf(PrivateAddressError);
    expect(error?.message).toBe(
      'rebind.example resolves to 10.1.2.3, a loopback, private or link-local address',
    );
  });

  it('passes resolution errors on, and reports an empty answer as not found', async () => {
    const failing = guardedLookup(answering(Object.assign(new Error('nope'), { code: 'ENOTFOUND' })));
    expect((await resolve(failing, 'gone.example', false)).error?.message).toBe('nope');
    const empty = guardedLookup(answering([]));
    expect((await resolve(empty, 'empty.example', false)).error).toMatchObject({ code: 'ENOTFOUND' });
  });

  it('uses the system resolver by default', async () => {
    const { error } = await resolve(guardedLookup(), 'localhost', false);
    expect(error).toBeInstanceOf(PrivateAddressError);
  });
});
