// A small Kubernetes API client on node:https: the handful of calls Signet makes (get, list, create,
// replace, JSON patch, watch) with a deadline on each. `@kubernetes/client-node` costs about 80 MiB
// and 0.4-0.6 s to load, more than the rest of the server together, for calls this size.
import { Agent, request } from 'node:https';
import { URL } from 'node:url';
import type { KubeCredentials } from './credentials.js';

/** The API server answered with an error status (or could not be reached: `status` 0). */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  /** `HTTP_<status>`, or `UNREACHABLE` when nothing answered. */
  readonly code: string;
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.code = status > 0 ? `HTTP_${status}` : 'UNREACHABLE';
  }
}

/** The HTTP status of a failed call, when there was one. */
export function statusOf(error: unknown): number | undefined {
  return error instanceof KubeApiError && error.status > 0 ? error.status : undefined;
}

export interface RequestOptions {
  readonly body?: unknown;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly contentType?: string;
  /** Default 10 s. */
  readonly timeoutMs?: number;
}

export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: Record<string, unknown>;
}

/** Answers larger than this are refused (a list of every Secret of a namespace stays far below). */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export class KubeClient {
  readonly #credentials: KubeCredentials;
  readonly #agent: Agent;
  readonly #server: URL;

  constructor(credentials: KubeCredentials) {
    this.#credentials = credentials;
    this.#server = new URL(credentials.server);
    this.#agent = new Agent({
      keepAlive: true,
      maxSockets: 16,
      ...(credentials.ca ? { ca: credentials.ca } : {}),
      ...(credentials.cert ? { cert: credentials.cert } : {}),
      ...(credentials.key ? { key: credentials.key } : {}),
      rejectUnauthorized: credentials.insecureSkipTlsVerify !== true,
    });
  }

  get<T>(path: string, options: RequestOptions = {}): Promise<T> {
    return this.request<T>('GET', path, options);
  }

  create<T>(path: string, body: unknown, options: RequestOptions = {}): Promise<T> {
    return this.request<T>('POST', path, { ...options, body });
  }

  replace<T>(path: string, body: unknown, options: RequestOptions = {}): Promise<T> {
    return this.request<T>('PUT', path, { ...options, body });
  }

  jsonPatch<T>(path: string, operations: readonly object[], options: RequestOptions = {}): Promise<T> {
    return this.request<T>('PATCH', path, {
      ...options,
      body: operations,
      contentType: 'application/json-patch+json',
    });
  }

  /** Every item of a list, following `continue` pages; `resourceVersion` is the list's. */
  async list<T>(
    path: string,
    options: RequestOptions = {},
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const items: T[] = [];
    let next: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.get<{
        items?: T[];
        metadata?: { continue?: string; resourceVersion?: string };
      }>(path, {
        ...options,
        query: { ...options.query, limit: 500, ...(next ? { continue: next } : {}) },
      });
      items.push(...(page.items ?? []));
      next = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    } while (next !== undefined);
    return { items, resourceVersion };
  }

  /** One call, answered as JSON; throws {@link KubeApiError}. */
  request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const timeoutMs = options.timeoutMs ?? 10_000;
    const body = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    return new Promise<T>((resolve, reject) => {
      const req = request(this.#url(path, options.query), {
        method,
        agent: this.#agent,
        headers: this.#headers(body, options.contentType),
        timeout: timeoutMs,
      });
      const deadline = setTimeout(() => req.destroy(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES)
            req.destroy(new Error(`answer larger than ${MAX_RESPONSE_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          clearTimeout(deadline);
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            try {
              resolve((text === '' ? {} : JSON.parse(text)) as T);
            } catch (error) {
              reject(
                new KubeApiError(status, 'InvalidAnswer', `${method} ${path}: the answer is not JSON`, {
                  cause: error,
                }),
              );
            }
            return;
          }
          reject(apiError(method, path, status, text));
        });
        res.on('error', (error) => reject(unreachable(method, path, error)));
      });
      req.on('error', (error) => {
        clearTimeout(deadline);
        reject(unreachable(method, path, error));
      });
      req.end(body);
    });
  }

  /**
   * Watches `path` from `resourceVersion`, calling `onEvent` per event, until the server ends the
   * watch, `signal` aborts, or `idleMs` pass without an event or bookmark. Resolves when it ends;
   * rejects with {@link KubeApiError} when it cannot start.
   */
  watch(
    path: string,
    resourceVersion: string,
    onEvent: (event: WatchEvent) => void,
    signal: AbortSignal,
    idleMs = 120_000,
  ): Promise<void> {
    const query = { watch: true, resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 300 };
    return new Promise<void>((resolve, reject) => {
      if (signal.aborted) return resolve();
      const req = request(this.#url(path, query), {
        method: 'GET',
        agent: this.#agent,
        headers: this.#headers(undefined),
      });
      let idle: NodeJS.Timeout | undefined;
      const alive = () => {
        clearTimeout(idle);
        idle = setTimeout(() => req.destroy(), idleMs);
      };
      const stop = () => req.destroy();
      signal.addEventListener('abort', stop, { once: true });
      const done = (error?: Error) => {
        clearTimeout(idle);
        signal.removeEventListener('abort', stop);
        if (error) reject(error);
        else resolve();
      };
      alive();
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        if (status !== 200) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.length < 64 && chunks.push(c));
          res.on('end', () => done(apiError('WATCH', path, status, Buffer.concat(chunks).toString('utf8'))));
          return;
        }
        let pending = '';
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          alive();
          pending += text;
          if (pending.length > MAX_RESPONSE_BYTES)
            return req.destroy(new Error('a watch event is too large'));
          let newline = pending.indexOf('\n');
          while (newline >= 0) {
            const line = pending.slice(0, newline);
            pending = pending.slice(newline + 1);
            if (line.trim() !== '') onEvent(JSON.parse(line) as WatchEvent);
            newline = pending.indexOf('\n');
          }
        });
        res.on('end', () => done());
        res.on('error', () => done());
        res.on('close', () => done());
      });
      req.on('error', (error) => (signal.aborted ? done() : done(unreachable('WATCH', path, error))));
      req.end();
    });
  }

  /** Closes kept-alive connections. */
  close(): void {
    this.#agent.destroy();
  }

  #url(path: string, query: RequestOptions['query']): URL {
    const url = new URL(path, this.#server);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  #headers(body: Buffer | undefined, contentType = 'application/json'): Record<string, string | number> {
    const headers: Record<string, string | number> = { accept: 'application/json', 'user-agent': 'signet' };
    const token = this.#credentials.token?.();
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) {
      headers['content-type'] = contentType;
      headers['content-length'] = body.length;
    }
    return headers;
  }
}

function apiError(method: string, path: string, status: number, text: string): KubeApiError {
  let reason = 'Unknown';
  let message = text.slice(0, 512);
  try {
    const parsed = JSON.parse(text) as { reason?: string; message?: string };
    reason = parsed.reason ?? reason;
    message = parsed.message ?? message;
  } catch {
    // not a Status object; the text says what it says
  }
  return new KubeApiError(status, reason, `${method} ${path}: ${status} ${reason}: ${message}`);
}

function unreachable(method: string, path: string, error: Error): KubeApiError {
  return new KubeApiError(0, 'Unreachable', `${method} ${path}: ${error.message}`, { cause: error });
}
