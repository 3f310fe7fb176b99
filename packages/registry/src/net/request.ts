// HTTP requests on undici's `request` API, shaped like `fetch` for the registry transport. Not the
// WHATWG `fetch` itself: that refuses the ports browsers block (6000, 10080, ...), and a registry
// client must reach a registry on whatever port it listens. Redirects are never followed here.
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { undici } from './undici.js';

export interface FetchInit {
  readonly method: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly signal?: AbortSignal;
  /** Which network path (proxies, CAs, address checks); undici's global dispatcher when absent. */
  readonly dispatcher?: Dispatcher;
}

/** What the transport reads of a response; a WHATWG `Response` is one. */
export interface FetchResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: ReadableStream<Uint8Array> | null;
}

/** The request function the registry transport uses; wrap it in tests to count or fail calls. */
export type FetchFunction = (url: URL, init: FetchInit) => Promise<FetchResponse>;

/** `FetchFunction` over undici's `request` (undici loads on the first request, not at start-up). */
export const dispatchFetch: FetchFunction = async (url, init) => {
  const response = await undici().request(url, {
    method: init.method as Dispatcher.HttpMethod,
    ...(init.headers === undefined ? {} : { headers: { ...init.headers } }),
    ...(init.body === undefined ? {} : { body: init.body }),
    ...(init.signal === undefined ? {} : { signal: init.signal }),
    ...(init.dispatcher === undefined ? {} : { dispatcher: init.dispatcher }),
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    for (const one of [value].flat().filter((v) => v !== undefined)) headers.append(name, one);
  }
  const body = Readable.toWeb(response.body) as ReadableStream<Uint8Array>;
  return { status: response.statusCode, headers, body };
};
