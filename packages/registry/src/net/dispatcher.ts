// The network path of every outbound call Signet makes: registries, token realms, TUF
// repositories, KMS. One undici dispatcher per purpose, honouring the proxy settings a cluster
// gives its Pods (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`, upper or lower case), trusting extra CA
// certificates when told to, and resolving names through an injectable `lookup` (which is how
// private addresses are refused at connect time). Through a proxy, the proxy resolves names: the
// address checks then apply to IP literals and `localhost` names only (see README).

import type { LookupFunction } from 'node:net';
import type { Dispatcher } from 'undici';
import { undici } from './undici.js';

export interface NetworkOptions {
  /** Where the proxy variables are read (default `process.env`); read once, when a dispatcher is made. */
  readonly env?: NodeJS.ProcessEnv;
  /** Extra CA certificates (PEM) trusted beside the system's, for TLS to the targets (not to the proxy). */
  readonly caCertificates?: readonly string[];
  /** Resolves names for direct connections (default `dns.lookup`). */
  readonly lookup?: LookupFunction;
  /** Limit on establishing a connection, TLS included (default 10 s; calls have their own deadline too). */
  readonly connectTimeoutMs?: number;
}

/** The proxy settings in `env`, as undici's `EnvHttpProxyAgent` reads them. */
export function proxySettings(env: NodeJS.ProcessEnv): {
  httpProxy: string;
  httpsProxy: string;
  noProxy: string;
} {
  const pick = (name: string) => env[name.toLowerCase()] ?? env[name] ?? '';
  return { httpProxy: pick('HTTP_PROXY'), httpsProxy: pick('HTTPS_PROXY'), noProxy: pick('NO_PROXY') };
}

/**
 * A dispatcher for undici's `request`/`fetch`: proxies from `env` (targets matching `NO_PROXY` are
 * reached directly), extra CAs, the given `lookup`. Other parts of Signet that call out (TUF, KMS)
 * use one too, so proxies are honoured the same way everywhere. undici is loaded on the first
 * call, so a process that never calls out never loads it (start-up time and memory).
 */
export async function createDispatcher(options: NetworkOptions = {}): Promise<Dispatcher> {
  const { getCACertificates } = await import('node:tls');
  const { EnvHttpProxyAgent } = undici();
  const extra = options.caCertificates ?? [];
  const tls = extra.length === 0 ? {} : { ca: [...getCACertificates('default'), ...extra] };
  const timeout = options.connectTimeoutMs ?? 10_000;
  const lookup = options.lookup === undefined ? {} : { lookup: options.lookup };
  return new EnvHttpProxyAgent({
    ...proxySettings(options.env ?? process.env),
    connect: { ...tls, ...lookup, timeout },
    requestTls: { ...tls, timeout },
  });
}
