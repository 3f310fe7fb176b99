// The one rule for where Signet connects when someone other than the operator chose the host: a
// registry's token realm or redirect, a TrustRoot's TUF mirror, a policy's remote URL. Such a host
// may not be loopback, private or link-local (cloud metadata, in-cluster services): IP literals and
// `localhost` names are refused here, before any connection, and every other name when it is
// resolved, at connect time, on every address of the answer (`guardedLookup`). Hosts the operator
// listed (`--private-host`) and hosts the operator configured (`--tuf-mirror`, a registry's own
// host) are reached directly. Through a proxy, the proxy resolves names, so only IP literals and
// `localhost` are checked (as for registries; see dispatcher.ts).
import type { Dispatcher } from 'undici';
import { createDispatcher, type NetworkOptions } from './dispatcher.js';
import { guardedLookup, PrivateAddressError } from './lookup.js';
import { isLocalhostName, isPrivateAddress } from './private-address.js';

export interface OutboundOptions extends NetworkOptions {
  /**
   * Hosts (`host[:port]`) the operator allows on loopback, private or link-local addresses; a
   * host without a port stands for its scheme's default port.
   */
  readonly privateHosts?: Iterable<string>;
}

/** Who chose the host a request goes to. */
export type HostChooser = 'operator' | 'other';

const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'https:': '443', 'http:': '80' };

export class OutboundNetwork {
  readonly #network: NetworkOptions;
  readonly #privateHosts: ReadonlySet<string>;
  #direct: Promise<Dispatcher> | undefined;
  #guarded: Promise<Dispatcher> | undefined;

  constructor(options: OutboundOptions = {}) {
    const { privateHosts, ...network } = options;
    this.#network = network;
    this.#privateHosts = new Set([...(privateHosts ?? [])].map((host) => host.toLowerCase()));
  }

  /** Whether the operator listed the host of `url` as allowed on a private address. */
  isListed(url: URL): boolean {
    const port = url.port || DEFAULT_PORTS[url.protocol] || '';
    const hostname = url.hostname.toLowerCase();
    return (
      this.#privateHosts.has(url.host.toLowerCase()) ||
      this.#privateHosts.has(`${hostname}:${port}`) ||
      (port === DEFAULT_PORTS[url.protocol] && this.#privateHosts.has(hostname))
    );
  }

  /**
   * Whether a request to `url` is refused before any connection: its host is a private IP literal
   * or a `localhost` name that the operator neither chose nor listed.
   */
  refuses(url: URL, chosenBy: HostChooser = 'other'): boolean {
    if (chosenBy === 'operator' || this.isListed(url)) return false;
    return isPrivateAddress(url.hostname) || isLocalhostName(url.hostname);
  }

  /**
   * The dispatcher for a request to `url`: the direct one for a host the operator chose or
   * listed; for any other host, a {@link PrivateAddressError} when {@link refuses} says so, else
   * the one whose lookup refuses private addresses.
   */
  dispatcherFor(url: URL, chosenBy: HostChooser = 'other'): Promise<Dispatcher> {
    if (chosenBy === 'operator' || this.isListed(url)) {
      this.#direct ??= createDispatcher(this.#network);
      return this.#direct;
    }
    if (this.refuses(url, chosenBy)) {
      return Promise.reject(new PrivateAddressError(url.hostname, url.hostname));
    }
    this.#guarded ??= createDispatcher({ ...this.#network, lookup: guardedLookup(this.#network.lookup) });
    return this.#guarded;
  }

  /** Closes the connections kept alive. */
  async close(): Promise<void> {
    const dispatchers = await Promise.all([this.#direct, this.#guarded]);
    await Promise.all(dispatchers.map((dispatcher) => dispatcher?.close()));
  }
}
