// Name resolution that refuses private addresses, for connections a registry chose (its token
// realm, its redirects) rather than the registry itself. It runs inside the connection (as the
// socket's `lookup`), so the addresses checked are the addresses connected to: no window for a
// DNS answer to change between a check and the connect (rebinding). Every address of the answer
// is checked, not only the first one tried.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isPrivateAddress } from './private-address.js';

/** A connection was refused: its host is, or its name resolved to, a loopback, private or link-local address. */
export class PrivateAddressError extends Error {
  override readonly name = 'PrivateAddressError';
  readonly code = 'SIGNET_PRIVATE_ADDRESS';
  readonly hostname: string;
  readonly address: string;

  constructor(hostname: string, address: string) {
    super(
      hostname === address
        ? `${hostname} is a loopback, private or link-local address`
        : `${hostname} resolves to ${address}, a loopback, private or link-local address`,
    );
    this.hostname = hostname;
    this.address = address;
  }
}

/** `lookup` (Node's `dns.lookup` by default) with every resolved address checked. */
export function guardedLookup(lookup: LookupFunction = dnsLookup as LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, answer) => {
      if (error) return callback(error, '', 0);
      const addresses = answer as unknown as LookupAddress[];
      const refused = addresses.find((entry) => isPrivateAddress(entry.address));
      if (refused !== undefined)
        return callback(new PrivateAddressError(hostname, refused.address) as NodeJS.ErrnoException, '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const [first] = addresses;
      if (first === undefined) {
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      }
      callback(null, first.address, first.family);
    });
  };
}
