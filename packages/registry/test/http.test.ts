import type { ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RegistryError } from '../src/errors.js';
import { type HttpRequest, HttpTransport, type HttpTransportOptions } from '../src/http.js';
import { dispatchFetch } from '../src/net/request.js';
import { callWithin, type Handler, JumpingClock, startServer, type TestServer } from './helpers/server.js';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(handler: Handler): Promise<TestServer> {
  const server = await startServer(handler);
  servers.push(server);
  return server;
}

const FAST_RETRY = { maxAttempts: 10, baseDelayMs: 20, maxDelayMs: 100 };

function transportFor(server: TestServer, options: HttpTransportOptions = {}): HttpTransport {
  return new HttpTransport({
    insecureHosts: [server.host],
    retry: FAST_RETRY,
    random: () => 0.5,
    ...options,
  });
}

function get(url: string, options: Partial<HttpRequest> = {}): HttpRequest {
  return {
    method: 'GET',
    url: new URL(url),
    maxBytes: 1024,
    context: { registry: 'r.test', repository: 'team/app' },
    ...options,
  };
}

async function failure(promise: Promise<unknown>): Promise<RegistryError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(RegistryError);
    return error as RegistryError;
  }
  throw new Error('expected a RegistryError, but the promise resolved');
}

/** Writes `total` bytes in 64 KiB chunks, respecting backpressure; resolves with what was written. */
function stream(response: ServerResponse, total: number): Promise<number> {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  return new Promise((resolve) => {
    let written = 0;
    response.on('close', () => resolve(written));
    const pump = () => {
      while (written < total && !response.destroyed) {
        written += chunk.length;
        if (!response.write(chunk)) return void response.once('drain', pump);
      }
      response.end();
    };
    pump();
  });
}

describe('HttpTransport retries', () => {
  it('retries a 429 and returns the 200 that follows', async () => {
    let calls = 0;
    const server = await serve((_request, response) => {
      calls++;
      response.writeHead(calls === 1 ? 429 : 200).end(calls === 1 ? 'slow down' : 'ok');
    });
    const response = await transportFor(server).send(get(`${server.url}/v2/`), callWithin(5_000));
    expect(response.status).toBe(200);
    expect(Buffer.from(response.body).toString()).toBe('ok');
    expect(calls).toBe(2);
  });

  it('waits as long as Retry-After asks when that fits before the deadline', async () => {
    let calls = 0;
    const server = await serve((_request, response) => {
      calls++;
      if (calls === 1) response.writeHead(503, { 'retry-after': '3' }).end();
      else response.writeHead(200).end();
    });
    const clock = new JumpingClock();
    const response = await transportFor(server, { clock }).send(
      get(`${server.url}/x`),
      callWithin(10_000, clock),
    );
    expect(response.status).toBe(200);
    expect(clock.slept).toEqual([3_000]);
  });

  it('understands Retry-After as an HTTP date', async () => {
    let calls = 0;
    const clock = new JumpingClock();
    const server = await serve((_request, response) => {
      calls++;
      const at = new Date(clock.now() + 4_000).toUTCString();
      if (calls === 1) response.writeHead(429, { 'retry-after': at }).end();
      else response.writeHead(204).end();
    });
    const response = await transportFor(server, { clock }).send(
      get(`${server.url}/x`),
      callWithin(10_000, clock),
    );
    expect(response.status).toBe(204);
    expect(clock.slept[0]).toBeGreaterThan(2_000);
    expect(clock.slept[0]).toBeLessThanOrEqual(4_000);
  });

  it('falls back to backoff when Retry-After is unreadable', async () => {
    let calls = 0;
    const server = await serve((_request, response) => {
      calls++;
      response.writeHead(calls < 3 ? 502 : 200, { 'retry-after': 'soon' }).end();
    });
    const clock = new JumpingClock();
    await transportFor(server, { clock }).send(get(`${server.url}/x`), callWithin(10_000, clock));
    // Exponential steps of 20 and 40 ms, each half fixed and half jitter (random() = 0.5).
    expect(clock.slept).toEqual([15, 30]);
  });

  it('gives up at once when Retry-After points past the deadline', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(429, { 'retry-after': '60' }).end();
    });
    const started = Date.now();
    const error = await failure(transportFor(server).send(get(`${server.url}/x`), callWithin(5_000)));
    expect(error.code).toBe('RATE_LIMITED');
    expect(error.status).toBe(429);
    expect(error.message).toContain('the retry the registry asked for (in 60000 ms) would pass the deadline');
    expect(error.message).toContain('registry r.test repository team/app');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(server.requests).toHaveLength(1);
  });

  it('keeps retrying a 503 until the deadline, then stops with SERVER_ERROR', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(503).end('down');
    });
    const started = Date.now();
    const transport = transportFor(server, {
      retry: { maxAttempts: 1_000, baseDelayMs: 50, maxDelayMs: 200 },
    });
    const error = await failure(
      transport.send(get(`${server.url}/v2/team/app/manifests/v1`), callWithin(1_000)),
    );
    const elapsed = Date.now() - started;
    expect(error.code).toBe('SERVER_ERROR');
    expect(error.status).toBe(503);
    expect(error.message).toMatch(
      /answered 503; gave up after \d+ attempts: the next retry \(in \d+ ms\) would pass/,
    );
    expect(server.requests.length).toBeGreaterThan(3);
    expect(elapsed).toBeLessThan(1_500);
  });

  it('stops after maxAttempts', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(500).end();
    });
    const transport = transportFor(server, { retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 } });
    const error = await failure(transport.send(get(`${server.url}/x`), callWithin(5_000)));
    expect(error.code).toBe('SERVER_ERROR');
    expect(error.message).toContain('gave up after 3 attempts');
    expect(server.requests).toHaveLength(3);
  });

  it('retries connection failures and reports UNREACHABLE with the cause', async () => {
    const server = await serve(() => {});
    const host = server.host;
    await server.close();
    servers.length = 0;
    const transport = new HttpTransport({
      insecureHosts: [host],
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    });
    const error = await failure(transport.send(get(`http://${host}/v2/`), callWithin(5_000)));
    expect(error.code).toBe('UNREACHABLE');
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).toContain('gave up after 2 attempts');
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('wraps the injected fetch: every attempt goes through it', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200).end();
    });
    const seen: string[] = [];
    const transport = transportFor(server, {
      fetch: (url, init) => {
        seen.push(`${init.method} ${url.pathname}`);
        return dispatchFetch(url, init);
      },
    });
    await transport.send(get(`${server.url}/v2/`, { method: 'HEAD' }), callWithin(5_000));
    expect(seen).toEqual(['HEAD /v2/']);
  });
});

describe('HttpTransport deadlines and cancellation', () => {
  it('aborts a body that drips one byte a second at the deadline', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => response.write('x'), 1_000);
      response.write('x');
      response.on('close', () => clearInterval(timer));
    });
    const started = Date.now();
    const error = await failure(transportFor(server).send(get(`${server.url}/x`), callWithin(1_200)));
    expect(error.code).toBe('TIMEOUT');
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it('times out a server that never answers', async () => {
    const server = await serve(() => {});
    const error = await failure(transportFor(server).send(get(`${server.url}/x`), callWithin(300)));
    expect(error.code).toBe('TIMEOUT');
    expect(error.message).toBe(
      'registry r.test repository team/app: the deadline passed before the registry answered',
    );
  });

  it('refuses to start after the deadline', async () => {
    const server = await serve((_request, response) => response.end());
    const error = await failure(transportFor(server).send(get(`${server.url}/x`), callWithin(-1)));
    expect(error.code).toBe('TIMEOUT');
    expect(server.requests).toHaveLength(0);
  });

  it('stops when the caller aborts, with the reason as cause', async () => {
    const server = await serve(() => {});
    const controller = new AbortController();
    const reason = new Error('admission request cancelled');
    setTimeout(() => controller.abort(reason), 50);
    const call = { signal: controller.signal, deadline: Date.now() + 5_000 };
    const error = await failure(transportFor(server).send(get(`${server.url}/x`), call));
    expect(error.code).toBe('ABORTED');
    expect(error.cause).toBe(reason);
  });

  it('stops a backoff sleep when the caller aborts', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(503, { 'retry-after': '2' }).end();
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const call = { signal: controller.signal, deadline: Date.now() + 5_000 };
    const error = await failure(transportFor(server).send(get(`${server.url}/x`), call));
    expect(error.code).toBe('ABORTED');
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('HttpTransport body caps', () => {
  it('stops reading a body at the cap without downloading it all', async () => {
    let written: Promise<number> = Promise.resolve(0);
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      written = stream(response, 50 * 1024 * 1024);
    });
    const error = await failure(
      transportFor(server).send(get(`${server.url}/x`, { maxBytes: 1024 * 1024 }), callWithin(10_000)),
    );
    expect(error.code).toBe('TOO_LARGE');
    expect(error.message).toContain('longer than 1048576 bytes');
    // The server could push only what the socket buffers held before the connection closed.
    expect(await written).toBeLessThan(20 * 1024 * 1024);
  });

  it('refuses an announced Content-Length over the cap before reading', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-length': 5_000 });
      response.end(Buffer.alloc(5_000));
    });
    const error = await failure(transportFor(server).send(get(`${server.url}/x`), callWithin(5_000)));
    expect(error.code).toBe('TOO_LARGE');
    expect(error.message).toContain('announces 5000 bytes; the limit is 1024');
  });

  it('accepts a body exactly at the cap', async () => {
    const server = await serve((_request, response) => {
      response.end(Buffer.alloc(1024, 1));
    });
    const response = await transportFor(server).send(get(`${server.url}/x`), callWithin(5_000));
    expect(response.body).toHaveLength(1024);
  });

  it('cuts a long error body instead of failing', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(404);
      response.write(Buffer.alloc(300, 0x61));
      response.end(Buffer.alloc(300, 0x62));
    });
    const transport = transportFor(server, { errorBodyMaxBytes: 400 });
    const response = await transport.send(get(`${server.url}/x`), callWithin(5_000));
    expect(response.status).toBe(404);
    expect(Buffer.from(response.body).toString()).toBe(`${'a'.repeat(300)}${'b'.repeat(100)}`);
  });

  it('reads no body for HEAD', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-length': 10_000_000 }).end();
    });
    const response = await transportFor(server).send(
      get(`${server.url}/x`, { method: 'HEAD' }),
      callWithin(5_000),
    );
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(0);
  });
});

describe('HttpTransport redirects', () => {
  it('follows a redirect to another host and drops Authorization there', async () => {
    const storage = await serve((_request, response) => {
      response.end('blob');
    });
    const registry = await serve((_request, response) => {
      response.writeHead(307, { location: `${storage.url}/bucket/blob?signature=abc` }).end();
    });
    const transport = new HttpTransport({ insecureHosts: [registry.host, storage.host] });
    const request = get(`${registry.url}/v2/team/app/blobs/sha256:1`, {
      headers: { Authorization: 'Bearer secret', accept: '*/*' },
    });
    const response = await transport.send(request, callWithin(5_000));
    expect(Buffer.from(response.body).toString()).toBe('blob');
    expect(response.url.href).toBe(`${storage.url}/bucket/blob?signature=abc`);
    expect(registry.requests[0]?.headers.authorization).toBe('Bearer secret');
    expect(storage.requests[0]?.headers.authorization).toBeUndefined();
    expect(storage.requests[0]?.headers.accept).toBe('*/*');
  });

  it('keeps Authorization on a redirect within the registry', async () => {
    const server = await serve((request, response) => {
      if (request.url === '/a') response.writeHead(302, { location: '/b' }).end();
      else response.end('here');
    });
    await transportFor(server).send(
      get(`${server.url}/a`, { headers: { authorization: 'Basic x' } }),
      callWithin(5_000),
    );
    expect(server.requests.map((request) => request.headers.authorization)).toEqual(['Basic x', 'Basic x']);
  });

  it('detects a redirect loop', async () => {
    const server = await serve((request, response) => {
      response.writeHead(302, { location: request.url === '/a' ? '/b' : '/a' }).end();
    });
    const error = await failure(transportFor(server).send(get(`${server.url}/a`), callWithin(5_000)));
    expect(error.code).toBe('REDIRECT_LOOP');
    expect(error.message).toContain(`${server.url}/a redirects in a loop`);
    expect(server.requests).toHaveLength(2);
  });

  it('stops after the hop limit', async () => {
    const server = await serve((request, response) => {
      const hop = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('hop') ?? 0);
      response.writeHead(301, { location: `/r?hop=${hop + 1}` }).end();
    });
    const error = await failure(
      transportFor(server, { maxRedirects: 3 }).send(get(`${server.url}/r`), callWithin(5_000)),
    );
    expect(error.code).toBe('REDIRECT_LOOP');
    expect(error.message).toContain('more than 3 redirects');
    expect(server.requests).toHaveLength(4);
  });

  it('turns a POST into a GET on 303 and keeps it on 307', async () => {
    const server = await serve((request, response) => {
      if (request.url === '/see-other') response.writeHead(303, { location: '/done' }).end();
      else if (request.url === '/temporary') response.writeHead(307, { location: '/done' }).end();
      else response.end(request.method);
    });
    const transport = transportFor(server);
    const post = (path: string) => get(`${server.url}${path}`, { method: 'POST', body: 'a=b' });
    expect(Buffer.from((await transport.send(post('/see-other'), callWithin(5_000))).body).toString()).toBe(
      'GET',
    );
    expect(Buffer.from((await transport.send(post('/temporary'), callWithin(5_000))).body).toString()).toBe(
      'POST',
    );
  });

  it('treats a 3xx without Location as a plain response', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(304).end();
    });
    const response = await transportFor(server).send(get(`${server.url}/x`), callWithin(5_000));
    expect(response.status).toBe(304);
  });

  it('refuses a Location that is not a URL or carries credentials', async () => {
    const server = await serve((request, response) => {
      const location = request.url === '/bad' ? 'http://[' : `http://user:pw@${request.headers.host}/x`;
      response.writeHead(302, { location }).end();
    });
    const transport = transportFor(server);
    expect((await failure(transport.send(get(`${server.url}/bad`), callWithin(5_000)))).message).toContain(
      'invalid Location header',
    );
    const withCredentials = await failure(transport.send(get(`${server.url}/creds`), callWithin(5_000)));
    expect(withCredentials.code).toBe('MALFORMED');
    expect(withCredentials.message).not.toContain('pw');
  });
});

describe('HttpTransport private addresses', () => {
  function recording(options: HttpTransportOptions = {}) {
    const urls: string[] = [];
    const transport = new HttpTransport({
      ...options,
      fetch: async (url) => {
        urls.push(url.href);
        if (url.pathname === '/redirect') {
          return new Response(null, {
            status: 302,
            headers: { location: 'https://169.254.169.254/latest/meta-data' },
          });
        }
        return new Response('ok');
      },
    });
    return { transport, urls };
  }

  it('refuses a redirect to a link-local address, before connecting', async () => {
    const { transport, urls } = recording();
    const error = await failure(transport.send(get('https://r.example/redirect'), callWithin(5_000)));
    expect(error.code).toBe('INSECURE_REFUSED');
    expect(error.message).toContain(
      'https://169.254.169.254/latest/meta-data: a loopback, private or link-local address',
    );
    expect(urls).toEqual(['https://r.example/redirect']);
  });

  it('refuses a private address that is not the registry itself', async () => {
    const { transport, urls } = recording();
    const request = get('https://10.0.0.9/token', { context: { registry: '10.0.0.8:5000' } });
    expect((await failure(transport.send(request, callWithin(5_000)))).code).toBe('INSECURE_REFUSED');
    expect(urls).toEqual([]);
  });

  it('allows the registry on a private address, and hosts listed in privateHosts or insecureHosts', async () => {
    const { transport, urls } = recording({ privateHosts: ['10.0.0.9'], insecureHosts: ['[::1]:8080'] });
    const context = { registry: '10.0.0.8:5000' };
    await transport.send(get('https://10.0.0.8:5000/v2/', { context }), callWithin(5_000));
    await transport.send(get('https://10.0.0.9/token', { context }), callWithin(5_000));
    await transport.send(get('http://[::1]:8080/token', { context }), callWithin(5_000));
    expect(urls).toHaveLength(3);
  });
});

describe('HttpTransport private addresses by name (issue 9, item 7)', () => {
  /** A TCP listener that only counts connections: reaching it at all is the failure. */
  async function tarpit() {
    let connections = 0;
    const server = createNetServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    return { port, connections: () => connections, close: () => new Promise((r) => server.close(r)) };
  }

  it.each([
    ['localhost', (port: number) => `https://localhost:${port}/latest/meta-data`],
    ['a *.localhost name', (port: number) => `https://metadata.localhost:${port}/token`],
  ])('refuses a redirect to %s without connecting to it', async (_name, target) => {
    const pit = await tarpit();
    try {
      const registry = await serve((_request, response) => {
        response.writeHead(302, { location: target(pit.port) }).end();
      });
      const transport = transportFor(registry, { retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } });
      const request = get(`${registry.url}/v2/team/app/blobs/sha256:${'a'.repeat(64)}`, {
        context: { registry: registry.host },
      });
      const error = await failure(transport.send(request, callWithin(5_000)));
      expect(error.code).toBe('INSECURE_REFUSED');
      expect(error.message).toContain('loopback, private or link-local');
      expect(pit.connections()).toBe(0);
    } finally {
      await pit.close();
    }
  });
});

describe('HttpTransport TLS failures', () => {
  it.each([
    ['CERT_HAS_EXPIRED', 'TLS with r.example failed: its certificate has expired'],
    ['CERT_NOT_YET_VALID', 'TLS with r.example failed: its certificate is not valid yet'],
    [
      'ERR_TLS_CERT_ALTNAME_INVALID',
      'TLS with r.example failed: its certificate is not valid for the name r.example',
    ],
    [
      'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
      'TLS with r.example failed: ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
    ],
  ])('reports %s plainly and does not retry it', async (code, message) => {
    let attempts = 0;
    const transport = new HttpTransport({
      fetch: async () => {
        attempts++;
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('openssl said things'), { code }),
        });
      },
    });
    const error = await failure(transport.send(get('https://r.example/v2/'), callWithin(5_000)));
    expect(error.code).toBe('TLS_FAILED');
    expect(error.problem).toBe(message);
    expect(attempts).toBe(1);
    await transport.close();
  });
});

describe('HttpTransport plain HTTP', () => {
  it('refuses http:// to a host not listed as insecure, before connecting', async () => {
    const server = await serve((_request, response) => response.end());
    const transport = new HttpTransport({ insecureHosts: ['127.0.0.1:1'] });
    const error = await failure(transport.send(get(`${server.url}/v2/`), callWithin(5_000)));
    expect(error.code).toBe('INSECURE_REFUSED');
    expect(server.requests).toHaveLength(0);
  });

  it('refuses a redirect from an insecure host to an unlisted http:// host', async () => {
    const other = await serve((_request, response) => response.end());
    const server = await serve((_request, response) => {
      response.writeHead(302, { location: `${other.url}/x` }).end();
    });
    const error = await failure(transportFor(server).send(get(`${server.url}/x`), callWithin(5_000)));
    expect(error.code).toBe('INSECURE_REFUSED');
    expect(other.requests).toHaveLength(0);
  });

  it('refuses other schemes', async () => {
    const error = await failure(new HttpTransport().send(get('ftp://r.test/x'), callWithin(5_000)));
    expect(error.code).toBe('INSECURE_REFUSED');
  });

  it('matches insecure hosts case-insensitively', () => {
    const transport = new HttpTransport({ insecureHosts: ['Registry.Local:5000'] });
    expect(transport.isInsecure('registry.local:5000')).toBe(true);
    expect(transport.isInsecure('registry.local')).toBe(false);
  });
});
