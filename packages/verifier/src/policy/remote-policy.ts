// `policy.remote`: a policy fetched over HTTPS when the ClusterImagePolicy is compiled, accepted
// only when its SHA-256 is the `sha256sum` the policy pins (as policy-controller's reconciler
// does), with a deadline and a size cap. A fetched policy is cached by (URL, digest): its content
// cannot change, so it is never fetched again, and admissions never fetch. A failure is cached
// for a short while, so recompiling a snapshot retries a broken policy on a bounded schedule.
// Whoever writes the policy chooses the URL: it goes through the same private-address guard as a
// registry's token realm (`OutboundNetwork`), and a failure to connect is said in a short class.
import { createHash } from 'node:crypto';
import type { NetworkOptions } from '@signet/registry';
import {
  BodyTooLargeError,
  cancelQuietly,
  dispatchFetch,
  type FetchFunction,
  type FetchResponse,
  OutboundNetwork,
  readCappedBody,
  unreachable,
} from '@signet/registry';
import type { RemotePolicyFetch } from './engines.js';

export interface RemotePolicyOptions {
  /** Deadline of one fetch, connection to last byte. */
  readonly timeoutMs?: number;
  /** A larger policy is refused. */
  readonly maxBytes?: number;
  /** How long a failed fetch is remembered before it is tried again. */
  readonly retryAfterMs?: number;
  /** How many fetched policies are kept (least recently used go first). */
  readonly maxEntries?: number;
  /** Extra CA certificates (PEM) trusted beside the system ones (a private policy server, tests). */
  readonly ca?: string | Buffer;
  /** Hosts (`host[:port]`) the operator allows on loopback, private or link-local addresses. */
  readonly privateHosts?: Iterable<string>;
  /** Proxies (from `env`), name resolution (`lookup`), connect timeout. */
  readonly network?: Omit<NetworkOptions, 'caCertificates'>;
  /** How requests are sent (`dispatchFetch`); it receives the dispatcher to use. */
  readonly fetch?: FetchFunction;
  readonly now?: () => number;
}

export class RemotePolicyError extends Error {
  override readonly name = 'RemotePolicyError';
}

type Entry = { readonly text: Promise<string>; failedAt?: number };

const DEFAULTS = { timeoutMs: 10_000, maxBytes: 1024 * 1024, retryAfterMs: 60_000, maxEntries: 256 };

interface Fetching {
  readonly settings: typeof DEFAULTS;
  readonly outbound: OutboundNetwork;
  readonly fetch: FetchFunction;
}

/** A {@link RemotePolicyFetch} with its cache. */
export function remotePolicyFetcher(options: RemotePolicyOptions = {}): RemotePolicyFetch {
  const { ca, privateHosts, network, fetch, now: clock, ...limits } = options;
  const settings = { ...DEFAULTS, ...limits };
  const now = clock ?? Date.now;
  const fetching: Fetching = {
    settings,
    outbound: new OutboundNetwork({
      ...network,
      ...(ca === undefined ? {} : { caCertificates: [ca.toString()] }),
      ...(privateHosts === undefined ? {} : { privateHosts }),
    }),
    fetch: fetch ?? dispatchFetch,
  };
  const entries = new Map<string, Entry>();
  return (url: string, sha256: string): Promise<string> => {
    const key = `${sha256} ${url}`;
    const cached = entries.get(key);
    if (
      cached !== undefined &&
      (cached.failedAt === undefined || now() - cached.failedAt < settings.retryAfterMs)
    ) {
      entries.delete(key);
      entries.set(key, cached);
      return cached.text;
    }
    const entry: Entry = { text: fetchPolicy(url, sha256, fetching) };
    entry.text.catch(() => {
      entry.failedAt = now();
    });
    entries.delete(key);
    entries.set(key, entry);
    for (const oldest of entries.keys()) {
      if (entries.size <= settings.maxEntries) break;
      entries.delete(oldest);
    }
    return entry.text;
  };
}

async function fetchPolicy(
  url: string,
  sha256: string,
  { settings, outbound, fetch }: Fetching,
): Promise<string> {
  const fail = (message: string, cause?: unknown) =>
    new RemotePolicyError(`fetching the policy from ${url}: ${message}`, { cause });
  const target = URL.parse(url);
  if (target?.protocol !== 'https:') throw fail('an https URL is expected');
  const signal = AbortSignal.timeout(settings.timeoutMs);
  let response: FetchResponse;
  try {
    const dispatcher = await outbound.dispatcherFor(target);
    response = await fetch(target, {
      method: 'GET',
      headers: { accept: 'text/plain, */*' },
      signal,
      dispatcher,
    });
  } catch (error) {
    throw fail(unreachable(target.host, error).message, error);
  }
  if (response.status < 200 || response.status > 299) {
    await cancelQuietly(response.body);
    throw fail(`the server answered ${response.status}`);
  }
  let body: Buffer;
  try {
    body = await readCappedBody(response, settings.maxBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError)
      throw fail(`the policy is larger than ${settings.maxBytes} bytes`);
    throw fail(unreachable(target.host, error).message, error);
  }
  const digest = createHash('sha256').update(body).digest('hex');
  if (digest !== sha256) throw fail(`its sha256 is ${digest}, not the sha256sum ${sha256} the policy pins`);
  return body.toString('utf8');
}
