// A loopback HTTP proxy in front of a registry that counts the requests it forwards: what the
// registry sees of an audit, whatever the client caches.
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingProxy {
  /** `127.0.0.1:PORT`: name images with it so their registry calls pass here. */
  readonly host: string;
  /** Requests forwarded so far. */
  count(): number;
  close(): Promise<void>;
}

export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const [hostname, port] = target.split(':');
  let forwarded = 0;
  const server = createServer((incoming, outgoing) => {
    forwarded++;
    const upstream = request(
      {
        hostname,
        port: Number(port),
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, host: target },
        timeout: 30_000,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on('error', () => outgoing.writeHead(502).end());
    upstream.on('timeout', () => upstream.destroy(new Error('upstream timeout')));
    incoming.pipe(upstream);
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${address.port}`,
    count: () => forwarded,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
