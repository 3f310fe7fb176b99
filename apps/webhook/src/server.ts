import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { ConnectionGate } from './http/connection-gate.js';
import type { Logger } from './logger.js';
import type { SignetMetrics } from './metrics.js';
import type { CertificatePair } from './tls.js';

// `node:http` through require, not `import`: Node builds the ESM facade of a built-in by reading
// every export, and node:http's lazy `WebSocket`/`CloseEvent` getters then load Node's bundled
// undici (about 3 MiB of heap and 20 ms of start-up) that Signet never uses.
const { createServer: createHttpServer } = createRequire(import.meta.url)(
  'node:http',
) as typeof import('node:http');

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** Mutual TLS on the admission port: the CA bundle that signs the callers' client certificates. */
export interface ClientAuth {
  /** PEM certificates of the CAs; replaced by `setClientCa`. */
  readonly ca: string;
  /** true: a connection without a valid client certificate is closed; false: only one with an invalid one. */
  readonly required: boolean;
}

export interface ServersOptions {
  readonly admissionApp: Listener;
  readonly opsApp: Listener;
  readonly certificate: CertificatePair;
  /** Admission (HTTPS) port; 0 picks a free one. */
  readonly port: number;
  /** Operations (plain HTTP) port; 0 picks a free one. */
  readonly opsPort: number;
  readonly host?: string;
  readonly opsHost?: string;
  /** Connections the admission port keeps open at once (default 1024); beyond, see ConnectionGate. */
  readonly maxConnections?: number;
  /** Connections one source address may hold on the admission port (default 256). */
  readonly maxConnectionsPerSource?: number;
  /** From accepting a connection to the end of its TLS handshake (default 5 s). */
  readonly handshakeTimeoutMs?: number;
  /** Ask callers for a client certificate signed by these CAs. */
  readonly clientAuth?: ClientAuth | undefined;
  /** Where refused connections and callers are counted. */
  readonly metrics?: SignetMetrics;
  readonly logger: Logger;
}

export interface RunningServers {
  readonly port: number;
  readonly opsPort: number;
  /** Swaps the serving certificate for new connections. */
  setCertificate(pair: CertificatePair): void;
  /** Swaps the client CA bundle for new connections (with `clientAuth` only). */
  setClientCa(ca: string): void;
  /** Closes kept-alive connections that carry no request now (they reconnect through the Service). */
  closeIdleConnections(): void;
  /** Stops accepting, lets in-flight reviews finish (up to `graceMs`), then closes everything. */
  close(graceMs?: number): Promise<void>;
}

export const DEFAULT_MAX_CONNECTIONS = 1024;
export const DEFAULT_MAX_CONNECTIONS_PER_SOURCE = 256;
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 5000;

function listen(server: HttpServer | HttpsServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(
  server: HttpServer | HttpsServer,
  graceMs: number,
  gate?: ConnectionGate,
): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => {
      server.closeAllConnections();
      // Connections still in their TLS handshake are not HTTP's to close.
      gate?.closeAll();
    }, graceMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
    gate?.closeHandshaking();
  });
}

function secureContext(pair: CertificatePair, clientCa: string | undefined) {
  return {
    cert: pair.cert,
    key: pair.key,
    minVersion: 'TLSv1.2' as const,
    ...(clientCa === undefined ? {} : { ca: clientCa }),
  };
}

/** Starts the HTTPS admission server and the plain-HTTP operations server. */
export async function startServers(options: ServersOptions): Promise<RunningServers> {
  let pair = options.certificate;
  let clientCa = options.clientAuth?.ca;
  const handshakeTimeoutMs = options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const https = createHttpsServer(
    {
      ...secureContext(pair, clientCa),
      requestCert: options.clientAuth !== undefined,
      // Required: a client without a certificate gets TLS's own "certificate required" alert (what
      // the API server then logs says what to fix); one with a certificate the CAs did not sign is
      // closed at the end of the handshake. If given: `checkCaller` below closes the latter.
      rejectUnauthorized: options.clientAuth?.required === true,
      // The gate's deadline is absolute; Node's (restarted by every byte) only backs it up.
      handshakeTimeout: handshakeTimeoutMs * 2,
      // How often headersTimeout and requestTimeout are enforced (Node's default: every 30 s).
      connectionsCheckingInterval: 5000,
    },
    options.admissionApp,
  );
  // A client that trickles headers or a body cannot hold a connection forever.
  https.headersTimeout = 15_000;
  https.requestTimeout = 40_000;
  https.keepAliveTimeout = 65_000;
  // Node drops connections over its own limit before the gate sees them; the gate enforces the cap.
  https.maxConnections = maxConnections + 64;
  const metrics = options.metrics;
  const gate = new ConnectionGate({
    maxConnections,
    maxPerSource: options.maxConnectionsPerSource ?? DEFAULT_MAX_CONNECTIONS_PER_SOURCE,
    handshakeTimeoutMs,
    onRefused: (reason) => metrics?.connectionsRefused.inc({ reason }),
  });
  gate.attach(https);
  metrics?.reportOpenConnections(() => gate.open);
  https.on('tlsClientError', (error: NodeJS.ErrnoException) => {
    const reason = tlsRefusal(error.code);
    if (reason !== undefined) metrics?.connectionsRefused.inc({ reason });
  });
  const clientAuth = options.clientAuth;
  https.on('secureConnection', (socket: TLSSocket) => {
    if (clientAuth === undefined) {
      metrics?.connections.inc({ client: 'anonymous' });
      return;
    }
    checkCaller(socket, clientAuth.required, metrics);
  });
  const ops = createHttpServer(options.opsApp);
  ops.headersTimeout = 10_000;
  ops.requestTimeout = 15_000;
  const port = await listen(https, options.port, options.host ?? '0.0.0.0');
  const opsPort = await listen(ops, options.opsPort, options.opsHost ?? options.host ?? '0.0.0.0');
  options.logger.info({ port, opsPort, clientAuth: clientAuthMode(clientAuth) }, 'listening');
  return {
    port,
    opsPort,
    setCertificate(next) {
      https.setSecureContext(secureContext(next, clientCa));
      pair = next;
    },
    setClientCa(ca) {
      if (clientAuth === undefined)
        throw new Error('the admission port was started without client authentication');
      https.setSecureContext(secureContext(pair, ca));
      clientCa = ca;
    },
    closeIdleConnections() {
      https.closeIdleConnections();
    },
    async close(graceMs = 10_000) {
      await Promise.all([closeServer(https, graceMs, gate), closeServer(ops, 1000)]);
    },
  };
}

/**
 * Why a failed handshake was refused, for the counter: TLS's own errors only. A reset or a broken
 * pipe is a client going away, or a connection the gate closed (and counted) itself.
 */
function tlsRefusal(
  code: string | undefined,
): 'client-certificate' | 'handshake-timeout' | 'tls' | undefined {
  if (code === 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE') return 'client-certificate';
  if (code === 'ERR_TLS_HANDSHAKE_TIMEOUT') return 'handshake-timeout';
  return code?.startsWith('ERR_SSL_') ? 'tls' : undefined;
}

function clientAuthMode(clientAuth: ClientAuth | undefined): string {
  if (clientAuth === undefined) return 'off';
  return clientAuth.required ? 'required' : 'if-given';
}

/**
 * A caller that presented a certificate the CAs did not sign is closed before any HTTP is read;
 * one that presented none is anonymous (when a certificate is required, TLS refused both already).
 */
function checkCaller(socket: TLSSocket, required: boolean, metrics: SignetMetrics | undefined): void {
  if (socket.authorized) {
    metrics?.connections.inc({ client: 'verified' });
    return;
  }
  const presented = Object.keys(socket.getPeerCertificate()).length > 0;
  if (presented || required) {
    metrics?.connectionsRefused.inc({ reason: 'client-certificate' });
    socket.destroy();
    return;
  }
  metrics?.connections.inc({ client: 'anonymous' });
}
