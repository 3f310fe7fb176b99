// The two parts of undici Signet uses, its environment-proxy agent and its `request` API, loaded
// without the rest of the package. `import('undici')` evaluates the whole package (fetch,
// WebSocket, caches, mocks: 109 modules); these two need 35. A process's first request (loopback,
// 2-core machine, three runs each) took 30–43 ms and 4 MiB more RSS this way, against 48–65 ms and
// 14–16 MiB through the whole package. undici is pinned (package.json); every registry test goes
// through these paths, so an upgrade that moves them fails the suite, not a cluster.
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

export interface UndiciParts {
  readonly EnvHttpProxyAgent: typeof Undici.EnvHttpProxyAgent;
  /** undici's `request`, with a dispatcher given (the global one when absent). */
  readonly request: (
    url: URL,
    options: Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path'> & {
      readonly dispatcher?: Undici.Dispatcher;
    },
  ) => Promise<Undici.Dispatcher.ResponseData>;
}

let parts: UndiciParts | undefined;

/** Loads them on first use (a process that never calls out never loads undici). */
export function undici(): UndiciParts {
  if (parts !== undefined) return parts;
  const require = createRequire(import.meta.url);
  // As undici's entry point does: the dispatchers' `request`, `connect`, ... methods (the proxy
  // agent tunnels with `connect`) are put on their prototype there, not in their own modules.
  const Dispatcher = require('undici/lib/dispatcher/dispatcher') as { prototype: object };
  const api = require('undici/lib/api') as Record<string, unknown>;
  if (!('connect' in Dispatcher.prototype)) Object.assign(Dispatcher.prototype, api);
  const EnvHttpProxyAgent =
    require('undici/lib/dispatcher/env-http-proxy-agent') as typeof Undici.EnvHttpProxyAgent;
  const apiRequest = api.request as (
    this: Undici.Dispatcher,
    options: Undici.Dispatcher.RequestOptions,
  ) => Promise<Undici.Dispatcher.ResponseData>;
  const { getGlobalDispatcher } = require('undici/lib/global') as {
    getGlobalDispatcher(): Undici.Dispatcher;
  };
  parts = {
    EnvHttpProxyAgent,
    // What undici's own top-level `request` does with a URL: origin and path from it.
    request: (url, { dispatcher, ...options }) =>
      apiRequest.call(dispatcher ?? getGlobalDispatcher(), {
        ...options,
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
      }),
  };
  return parts;
}
