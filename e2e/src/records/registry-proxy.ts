// A loopback HTTP proxy in front of a test registry, for outages on demand: it forwards (and
// counts what it is asked), answers 429 as a rate-limited registry does (Docker Hub's
// TOOMANYREQUESTS), or drops every connection as an unreachable one. Signet is pointed at the
// proxy's address; the images are pushed and signed through the registry's own.
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ProxyMode = 'forward' | '429' | 'down';

export interface RegistryProxy {
  /** `127.0.0.1:PORT`: the registry part of the image references Signet sees. */
  readonly host: string;
  /** Every request, `METHOD /path`, in order (answered or not). */
  readonly requests: string[];
  mode: ProxyMode;
  close(): Promise<void>;
}

export async function startRegistryProxy(upstream: string): Promise<RegistryProxy> {
  const requests: string[] = [];
  const proxy: { mode: ProxyMode } = { mode: 'forward' };
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (proxy.mode === 'down') {
      req.socket.destroy();
      return;
    }
    if (proxy.mode === '429') {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3600' });
      res.end('{"errors":[{"code":"TOOMANYREQUESTS","message":"You have reached your pull rate limit."}]}');
      return;
    }
    const forward = httpRequest(
      `http://${upstream}${req.url}`,
      { method: req.method, headers: { ...req.headers, host: upstream } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    get mode() {
      return proxy.mode;
    },
    set mode(mode: ProxyMode) {
      proxy.mode = mode;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
