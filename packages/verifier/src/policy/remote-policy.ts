// `policy.remote`: a policy fetched over HTTPS when the ClusterImagePolicy is compiled, accepted
// only when its SHA-256 is the `sha256sum` the policy pins (as policy-controller's reconciler
// does), with a deadline and a size cap. A fetched policy is cached by (URL, digest): its content
// cannot change, so it is never fetched again, and admissions never fetch. A failure is cached
// for a short while, so recompiling a snapshot retries a broken policy on a bounded schedule.
import { createHash } from 'node:crypto';
import { request } from 'node:https';
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
  /** Certificates to trust instead of Node's CA store (a private policy server, tests). */
  readonly ca?: string | Buffer;
  readonly now?: () => number;
}

export class RemotePolicyError extends Error {
  override readonly name = 'RemotePolicyError';
}

type Entry = { readonly text: Promise<string>; failedAt?: number };

const DEFAULTS = { timeoutMs: 10_000, maxBytes: 1024 * 1024, retryAfterMs: 60_000, maxEntries: 256 };

/** A {@link RemotePolicyFetch} with its cache. */
export function remotePolicyFetcher(options: RemotePolicyOptions = {}): RemotePolicyFetch {
  const settings = { ...DEFAULTS, ...options };
  const now = options.now ?? Date.now;
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
    const entry: Entry = { text: fetchPolicy(url, sha256, settings) };
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

function fetchPolicy(
  url: string,
  sha256: string,
  settings: typeof DEFAULTS & { readonly ca?: string | Buffer },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const fail = (message: string, cause?: unknown) =>
      reject(new RemotePolicyError(`fetching the policy from ${url}: ${message}`, { cause }));
    const call = request(url, {
      method: 'GET',
      timeout: settings.timeoutMs,
      ...(settings.ca === undefined ? {} : { ca: settings.ca }),
      headers: { accept: 'text/plain, */*' },
    });
    const deadline = setTimeout(
      () => call.destroy(new Error(`no answer within ${settings.timeoutMs} ms`)),
      settings.timeoutMs,
    );
    call.on('error', (error) => {
      clearTimeout(deadline);
      fail(error.message, error);
    });
    call.on('response', (response) => {
      const status = response.statusCode ?? 0;
      if (status < 200 || status > 299) {
        response.resume();
        clearTimeout(deadline);
        fail(`the server answered ${status}`);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > settings.maxBytes) {
          call.destroy(new Error(`the policy is larger than ${settings.maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.on('end', () => {
        clearTimeout(deadline);
        const body = Buffer.concat(chunks);
        const digest = createHash('sha256').update(body).digest('hex');
        if (digest !== sha256) {
          fail(`its sha256 is ${digest}, not the sha256sum ${sha256} the policy pins`);
          return;
        }
        resolve(body.toString('utf8'));
      });
    });
    call.end();
  });
}
