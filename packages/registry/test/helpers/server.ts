// A small HTTP server on 127.0.0.1 for the hostile-registry tests. A real registry cannot be made
// to lie about digests, drip bytes, loop redirects or 401 forever, so these behaviours are written
// here, next to the tests that need them.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../src/clock.js';
import type { RegistryCall } from '../../src/deadline.js';

export interface SeenRequest {
  readonly method: string;
  /** Path and query. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

export type Handler = (request: IncomingMessage, response: ServerResponse) => unknown;

export interface TestServer {
  /** `127.0.0.1:PORT` */
  readonly host: string;
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  readonly requests: SeenRequest[];
  close(): Promise<void>;
}

export async function startServer(handler: Handler): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  const server = createServer((request, response) => {
    requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers });
    Promise.resolve(handler(request, response)).catch((error: unknown) => {
      response.destroy(error instanceof Error ? error : new Error(String(error)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const host = `127.0.0.1:${port}`;
  return {
    host,
    url: `http://${host}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A call with a fresh signal and a deadline `ms` from now on `clock` (the wall clock by default). */
export function callWithin(ms: number, clock: Pick<Clock, 'now'> = { now: () => Date.now() }): RegistryCall {
  return { signal: new AbortController().signal, deadline: clock.now() + ms };
}

/**
 * A clock whose sleeps return at once and move its time forward: retries and token expiry run
 * without waiting, and `slept` says how long the code asked to wait.
 */
export class JumpingClock implements Clock {
  offset = 0;
  readonly slept: number[] = [];

  now(): number {
    return Date.now() + this.offset;
  }

  async sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw signal.reason;
    this.slept.push(ms);
    this.offset += ms;
  }

  advance(ms: number): void {
    this.offset += ms;
  }
}

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const bytes = Buffer.from(JSON.stringify(body));
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': bytes.length,
    ...headers,
  });
  response.end(bytes);
}

/** Resolves with the request body. */
export async function readRequestBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
