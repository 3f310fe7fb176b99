import type { Server as HttpServer, RequestListener } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { Logger } from './logger.js';
import type { CertificatePair } from './tls.js';

// `node:http` through require, not `import`: Node builds the ESM facade of a built-in by reading
// every export, and node:http's lazy `WebSocket`/`CloseEvent` getters then load Node's bundled
// undici (about 3 MiB of heap and 20 ms of start-up) that Signet never uses.
const { createServer: createHttpServer } = createRequire(import.meta.url)(
  'node:http',
) as typeof import('node:http');

export interface ServersOptions {
  readonly admissionApp: RequestListener;
  readonly opsApp: RequestListener;
  readonly certificate: CertificatePair;
  /** Admission (HTTPS) port; 0 picks a free one. */
  readonly port: number;
  /** Operations (plain HTTP) port; 0 picks a free one. */
  readonly opsPort: number;
  readonly host?: string;
  readonly opsHost?: string;
  /** Connections the admission port keeps open at once (default 1024); beyond, new ones are refused. */
  readonly maxConnections?: number;
  readonly logger: Logger;
}

export interface RunningServers {
  readonly port: number;
  readonly opsPort: number;
  /** Swaps the serving certificate for new connections. */
  setCertificate(pair: CertificatePair): void;
  /** Closes kept-alive connections that carry no request now (they reconnect through the Service). */
  closeIdleConnections(): void;
  /** Stops accepting, lets in-flight reviews finish (up to `graceMs`), then closes everything. */
  close(graceMs?: number): Promise<void>;
}

function listen(server: HttpServer | HttpsServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: HttpServer | HttpsServer, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** Starts the HTTPS admission server and the plain-HTTP operations server. */
export async function startServers(options: ServersOptions): Promise<RunningServers> {
  const https = createHttpsServer(
    { cert: options.certificate.cert, key: options.certificate.key, minVersion: 'TLSv1.2' },
    options.admissionApp,
  );
  // A client that trickles headers or a body cannot hold a connection forever.
  https.headersTimeout = 15_000;
  https.requestTimeout = 40_000;
  https.keepAliveTimeout = 65_000;
  https.maxConnections = options.maxConnections ?? 1024;
  const ops = createHttpServer(options.opsApp);
  ops.headersTimeout = 10_000;
  ops.requestTimeout = 15_000;
  const port = await listen(https, options.port, options.host ?? '0.0.0.0');
  const opsPort = await listen(ops, options.opsPort, options.opsHost ?? options.host ?? '0.0.0.0');
  options.logger.info({ port, opsPort }, 'listening');
  return {
    port,
    opsPort,
    setCertificate(pair) {
      https.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' });
    },
    closeIdleConnections() {
      https.closeIdleConnections();
    },
    async close(graceMs = 10_000) {
      await Promise.all([closeServer(https, graceMs), closeServer(ops, 1000)]);
    },
  };
}
