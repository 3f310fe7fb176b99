// HTTP for the registry layer, on an injected request function (undici's `request` by default,
// not WHATWG `fetch`, which refuses ports browsers block): one call = one deadline, retries for
// 429/5xx/connection failures inside it, redirects followed by hand (so we can refuse loops, count
// hops, keep plain HTTP out, and drop credentials when a blob download is redirected to storage on
// another host), and bodies read under a byte cap. Connections go through two dispatchers: one for
// the registry's own host (and hosts listed as private), one for every other host the registry
// sends Signet to, whose names must not resolve to private addresses. Both honour proxy settings
// and the extra CA certificates.
import type { Dispatcher } from 'undici';
import { type OverCap, readBody } from './body.js';
import { type Clock, systemClock } from './clock.js';
import { CallBudget, type RegistryCall } from './deadline.js';
import { displayUrl, RegistryError, type RegistryErrorContext } from './errors.js';
import type { NetworkOptions } from './net/dispatcher.js';
import { PrivateAddressError } from './net/lookup.js';
import { OutboundNetwork } from './net/outbound.js';
import { dispatchFetch, type FetchFunction, type FetchResponse } from './net/request.js';
import {
  backoffDelay,
  DEFAULT_RETRY_POLICY,
  isRetryableStatus,
  parseRetryAfter,
  type RetryPolicy,
} from './retry.js';

export type { FetchFunction, FetchResponse };

export interface HttpRequest {
  readonly method: 'GET' | 'HEAD' | 'POST';
  readonly url: URL;
  readonly headers?: Readonly<Record<string, string>>;
  /** A form body (token requests with an identity token). */
  readonly body?: string;
  /** Cap for a 2xx body; a longer one is `TOO_LARGE`. Error bodies are cut at a small cap instead. */
  readonly maxBytes: number;
  /** Registry and repository named by errors. */
  readonly context: RegistryErrorContext;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: Headers;
  /** Empty for HEAD; at most `errorBodyMaxBytes` for a non-2xx status. */
  readonly body: Uint8Array;
  /** The URL that answered, after redirects. */
  readonly url: URL;
}

export interface HttpTransportOptions extends NetworkOptions {
  /** How requests are sent (`dispatchFetch` by default); it receives the dispatcher to use in `init`. */
  readonly fetch?: FetchFunction;
  readonly clock?: Clock;
  /** Jitter source in [0, 1). */
  readonly random?: () => number;
  /** Hosts (`host[:port]`) spoken to over plain HTTP; every other host must use https. */
  readonly insecureHosts?: Iterable<string>;
  /**
   * Hosts (`host[:port]`) on loopback, private or link-local IP addresses that a registry may send
   * requests to (its token realm, redirects) besides its own host. Insecure hosts are allowed too.
   */
  readonly privateHosts?: Iterable<string>;
  readonly retry?: RetryPolicy;
  /** Redirects followed per request (blob downloads take one or two). */
  readonly maxRedirects?: number;
  /** How much of a non-2xx body is kept (for error codes such as `MANIFEST_UNKNOWN`). */
  readonly errorBodyMaxBytes?: number;
}

const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

export class HttpTransport {
  readonly clock: Clock;
  readonly #fetch: FetchFunction;
  readonly #random: () => number;
  readonly #insecure: ReadonlySet<string>;
  readonly #retry: RetryPolicy;
  readonly #maxRedirects: number;
  readonly #errorBodyMaxBytes: number;
  readonly #outbound: OutboundNetwork;

  constructor(options: HttpTransportOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.#fetch = options.fetch ?? dispatchFetch;
    this.#random = options.random ?? Math.random;
    this.#insecure = lowercased(options.insecureHosts);
    this.#outbound = new OutboundNetwork({
      ...options,
      privateHosts: [...this.#insecure, ...lowercased(options.privateHosts)],
    });
    this.#retry = options.retry ?? DEFAULT_RETRY_POLICY;
    this.#maxRedirects = options.maxRedirects ?? 5;
    this.#errorBodyMaxBytes = options.errorBodyMaxBytes ?? 16 * 1024;
  }

  /** Closes the connections kept alive (a process that is done with the registry calls this). */
  close(): Promise<void> {
    return this.#outbound.close();
  }

  /** Whether `host` (`host[:port]`) is listed as insecure, i.e. served over plain HTTP. */
  isInsecure(host: string): boolean {
    return this.#insecure.has(host.toLowerCase());
  }

  /**
   * Sends one request and returns the final response (after retries and redirects) with its body
   * read. Throws `RegistryError` only: TIMEOUT, ABORTED, UNREACHABLE, RATE_LIMITED, SERVER_ERROR,
   * REDIRECT_LOOP, INSECURE_REFUSED, TOO_LARGE, MALFORMED.
   */
  async send(request: HttpRequest, call: RegistryCall): Promise<HttpResponse> {
    const budget = new CallBudget(call, this.clock);
    try {
      budget.check(request.context);
      return await this.#follow(request, budget);
    } catch (error) {
      throw budget.translate(error, request.context);
    } finally {
      budget.dispose();
    }
  }

  async #follow(request: HttpRequest, budget: CallBudget): Promise<HttpResponse> {
    const visited = new Set([request.url.href]);
    let current = request;
    for (let hops = 0; ; hops++) {
      const dispatcher = await this.#dispatcherFor(current.url, current.context);
      const response = await this.#fetchWithRetries(current, dispatcher, budget);
      const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get('location') : null;
      if (location === null) return this.#read(response, current);
      await response.body?.cancel().catch(ignore);
      const next = resolveLocation(location, current);
      if (visited.has(next.href)) {
        throw new RegistryError('REDIRECT_LOOP', current.context, `${displayUrl(next)} redirects in a loop`);
      }
      if (hops >= this.#maxRedirects) {
        throw new RegistryError(
          'REDIRECT_LOOP',
          current.context,
          `more than ${this.#maxRedirects} redirects from ${displayUrl(request.url)}`,
        );
      }
      visited.add(next.href);
      current = redirected(current, next, response.status);
    }
  }

  /**
   * The dispatcher for `url`, after refusing what may not be sent there: plain HTTP except to
   * insecure hosts; private IP literals and `localhost` names except for the registry itself or
   * hosts listed as private. Any other host that is not the registry's gets the dispatcher whose
   * lookup refuses private addresses.
   */
  #dispatcherFor(url: URL, context: RegistryErrorContext): Promise<Dispatcher> {
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && this.isInsecure(url.host))) {
      throw new RegistryError(
        'INSECURE_REFUSED',
        context,
        `refusing ${displayUrl(url)}: only https is allowed for hosts not listed as insecure`,
      );
    }
    const chosenBy = url.host.toLowerCase() === context.registry.toLowerCase() ? 'operator' : 'other';
    if (this.#outbound.refuses(url, chosenBy)) {
      throw new RegistryError(
        'INSECURE_REFUSED',
        context,
        `refusing ${displayUrl(url)}: a loopback, private or link-local address that is not the registry itself ` +
          '(list the host as a private host to allow it)',
      );
    }
    return this.#outbound.dispatcherFor(url, chosenBy);
  }

  async #fetchWithRetries(
    request: HttpRequest,
    dispatcher: Dispatcher,
    budget: CallBudget,
  ): Promise<FetchResponse> {
    for (let attempt = 1; ; attempt++) {
      budget.check(request.context);
      let response: FetchResponse;
      try {
        response = await this.#fetch(request.url, {
          method: request.method,
          headers: { ...request.headers },
          ...(request.body === undefined ? {} : { body: request.body }),
          signal: budget.signal,
          dispatcher,
        });
      } catch (error) {
        // Answers that another attempt cannot change: refused addresses, TLS problems.
        const final = budget.interrupted() ? undefined : connectionRefusal(error, request);
        if (final !== undefined) throw final;
        const failure = budget.translate(error, request.context);
        if (failure.code !== 'UNREACHABLE') throw failure;
        await this.#waitBeforeRetry(attempt, undefined, failure, budget);
        continue;
      }
      if (!isRetryableStatus(response.status)) return response;
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'), this.clock.now());
      await response.body?.cancel().catch(ignore);
      const failure = statusFailure(response.status, request);
      await this.#waitBeforeRetry(attempt, retryAfter, failure, budget);
    }
  }

  /** Sleeps before the next attempt, or throws `failure` when there is no attempt or time left. */
  async #waitBeforeRetry(
    attempt: number,
    retryAfter: number | undefined,
    failure: RegistryError,
    budget: CallBudget,
  ): Promise<void> {
    if (attempt >= this.#retry.maxAttempts) {
      throw giveUp(failure, `gave up after ${attempt} attempts`);
    }
    const delay = retryAfter ?? backoffDelay(attempt, this.#retry, this.#random);
    if (delay >= budget.remaining()) {
      const asked = retryAfter === undefined ? 'the next retry' : 'the retry the registry asked for';
      throw giveUp(
        failure,
        `gave up after ${attempt} attempts: ${asked} (in ${delay} ms) would pass the deadline`,
      );
    }
    await this.clock.sleep(delay, budget.signal);
  }

  async #read(response: FetchResponse, request: HttpRequest): Promise<HttpResponse> {
    let body: Uint8Array;
    if (request.method === 'HEAD') {
      await response.body?.cancel().catch(ignore);
      body = new Uint8Array(0);
    } else {
      const ok = response.status >= 200 && response.status < 300;
      const cap = ok ? request.maxBytes : this.#errorBodyMaxBytes;
      const overCap: OverCap = ok ? 'fail' : 'truncate';
      body = await readBody(response, cap, overCap, request.context);
    }
    return { status: response.status, headers: response.headers, body, url: request.url };
  }
}

/** The `code`s along an error's cause chain (undici wraps socket and TLS errors). */
function errorCodes(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = current.cause;
  }
  return codes;
}

/** OpenSSL's view of a TLS handshake answered with plain HTTP. */
const PLAIN_HTTP_CODES = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG']);
/** Certificate chains that do not end at a trusted CA. */
const UNTRUSTED_CA_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
]);

/**
 * The error for a connection that failed in a way retrying cannot change, said so that the
 * reader knows what to do (no OpenSSL text), or `undefined` for failures worth another attempt.
 */
function connectionRefusal(error: unknown, request: HttpRequest): RegistryError | undefined {
  const { url, context } = request;
  let cause: unknown = error;
  for (let depth = 0; depth < 5 && cause instanceof Error; depth++) {
    if (cause instanceof PrivateAddressError) {
      return new RegistryError(
        'INSECURE_REFUSED',
        context,
        `refusing ${displayUrl(url)}: ${cause.message}, and not the registry itself ` +
          '(list the host as a private host to allow it)',
      );
    }
    cause = cause.cause;
  }
  const codes = errorCodes(error);
  // Each message below says in words what OpenSSL's text says: the cause is kept, not repeated.
  const tls = (problem: string, causeInMessage = true) =>
    new RegistryError('TLS_FAILED', context, `TLS with ${url.host} failed: ${problem}`, {
      cause: error,
      causeInMessage,
    });
  const code = codes.find(
    (c) => PLAIN_HTTP_CODES.has(c) || UNTRUSTED_CA_CODES.has(c) || /^(ERR_TLS_|ERR_SSL_|CERT_)/.test(c),
  );
  if (code === undefined) return undefined;
  if (PLAIN_HTTP_CODES.has(code)) {
    return new RegistryError(
      'TLS_FAILED',
      context,
      `${url.host} answered plain HTTP to an HTTPS request; if it serves plain HTTP, add it to the insecure registries`,
      { cause: error, causeInMessage: true },
    );
  }
  if (UNTRUSTED_CA_CODES.has(code)) {
    return tls(
      `its certificate is not issued by a CA Signet trusts (${code}); if a private CA issued it, add that CA to the registry CA bundle`,
    );
  }
  if (code === 'CERT_HAS_EXPIRED') return tls('its certificate has expired');
  if (code === 'CERT_NOT_YET_VALID') return tls('its certificate is not valid yet');
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return tls(`its certificate is not valid for the name ${url.hostname}`);
  // A TLS failure without words of its own: OpenSSL's text is all there is.
  return tls(code, false);
}

function lowercased(hosts: Iterable<string> | undefined): Set<string> {
  return new Set([...(hosts ?? [])].map((host) => host.toLowerCase()));
}

function resolveLocation(location: string, request: HttpRequest): URL {
  let next: URL;
  try {
    next = new URL(location, request.url);
  } catch (error) {
    throw new RegistryError('MALFORMED', request.context, 'a redirect has an invalid Location header', {
      cause: error,
    });
  }
  if (next.username !== '' || next.password !== '') {
    throw new RegistryError('MALFORMED', request.context, 'a redirect Location carries user credentials');
  }
  return next;
}

/**
 * The request to send to a redirect's target. Credentials are only for the registry's own origin:
 * a blob redirected to object storage is fetched without them (the URL itself is signed).
 */
function redirected(request: HttpRequest, next: URL, status: number): HttpRequest {
  const sameOrigin = next.origin === request.url.origin;
  const headers = Object.fromEntries(
    Object.entries(request.headers ?? {}).filter(
      ([name]) => sameOrigin || name.toLowerCase() !== 'authorization',
    ),
  );
  const toGet = status === 303 || (request.method === 'POST' && (status === 301 || status === 302));
  if (toGet) {
    const { body: _dropped, ...rest } = request;
    return { ...rest, method: 'GET', url: next, headers };
  }
  return { ...request, url: next, headers };
}

function statusFailure(status: number, request: HttpRequest): RegistryError {
  const context = { ...request.context, status };
  return status === 429
    ? new RegistryError('RATE_LIMITED', context, `${displayUrl(request.url)} answered 429 Too Many Requests`)
    : new RegistryError('SERVER_ERROR', context, `${displayUrl(request.url)} answered ${status}`);
}

function giveUp(failure: RegistryError, why: string): RegistryError {
  const context = { registry: failure.registry, repository: failure.repository, status: failure.status };
  return new RegistryError(failure.code, context, `${failure.problem}; ${why}`, {
    cause: failure.cause,
    causeInMessage: failure.causeInMessage,
  });
}

/** Cancelling a stream that already failed rejects; the failure that matters is reported elsewhere. */
function ignore(): void {}
