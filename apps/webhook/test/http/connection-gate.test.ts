// The admission port's connection gate (http/connection-gate.ts) on a real HTTPS server, with small
// limits: who is shed, who is refused, and why (the counter). The attack at full size is
// test/attack/connections.test.ts.
import { type Socket, connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterEach, expect, it } from 'vitest';
import { createCertificateAuthority, issueServingCertificate } from '../../src/certificates.js';
import { createLogger } from '../../src/logger.js';
import { SignetMetrics } from '../../src/metrics.js';
import { type RunningServers, startServers } from '../../src/server.js';

const open: Socket[] = [];
let servers: RunningServers | undefined;

afterEach(async () => {
  for (const socket of open.splice(0)) socket.destroy();
  await servers?.close(100);
});

async function start(limits: { maxConnections: number; maxConnectionsPerSource: number }) {
  const ca = await createCertificateAuthority('gate', 1);
  const metrics = new SignetMetrics({ defaultMetrics: false });
  servers = await startServers({
    admissionApp: (_req, res) => res.end('ok'),
    opsApp: (_req, res) => res.end('ok'),
    certificate: await issueServingCertificate(ca, ['127.0.0.1'], 1),
    port: 0,
    opsPort: 0,
    host: '127.0.0.1',
    handshakeTimeoutMs: 10_000,
    metrics,
    logger: createLogger({ level: 'silent' }),
    ...limits,
  });
  const refused = async (reason: string) => {
    const text = await metrics.registry.getSingleMetricAsString('signet_admission_connections_refused_total');
    return Number(new RegExp(`reason="${reason}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
  };
  return { port: servers.port, ca: ca.cert, refused, metrics };
}

/** A TCP connection from `source` that sends nothing (`closed` once the server closed it). */
function silent(port: number, source: string): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port, localAddress: source });
    open.push(socket);
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve(socket));
  });
}

/** A connection from `source` that completes TLS and then idles. */
function established(port: number, ca: string, source: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const tcp = tcpConnect({ host: '127.0.0.1', port, localAddress: source });
    const socket = tlsConnect({ socket: tcp, ca, host: '127.0.0.1' }, () => resolve(socket));
    // Only the TLS socket is destroyed afterwards (it closes the TCP one): destroying both
    // crashes Node 26.10 (SIGSEGV in the client).
    open.push(socket);
    socket.once('error', reject);
  });
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

it('a source over its share closes its own oldest silent connection first', async () => {
  const { port, refused } = await start({ maxConnections: 100, maxConnectionsPerSource: 3 });
  const first = await silent(port, '127.0.0.2');
  for (let i = 0; i < 3; i++) await silent(port, '127.0.0.2');
  await settle();
  expect(first.closed).toBe(true);
  expect(await refused('shed')).toBe(1);
});

it('a source whose connections all finished TLS is refused past its share; others are not', async () => {
  const { port, ca, refused } = await start({ maxConnections: 100, maxConnectionsPerSource: 2 });
  await established(port, ca, '127.0.0.2');
  await established(port, ca, '127.0.0.2');
  // The server sees a handshake end one round trip after the client does.
  await settle();
  const third = await silent(port, '127.0.0.2');
  await settle();
  expect(third.closed).toBe(true);
  expect(await refused('per-source')).toBe(1);
  // Counted once: the reset the refusal causes in TLS is not a failed handshake of its own.
  expect(await refused('tls')).toBe(0);
  await established(port, ca, '127.0.0.3');
});

it('at the cap the oldest silent connection makes room; with none left the new one is refused', async () => {
  const { port, ca, refused, metrics } = await start({ maxConnections: 2, maxConnectionsPerSource: 2 });
  const quiet = await silent(port, '127.0.0.2');
  await established(port, ca, '127.0.0.3');
  await settle();
  // The API server's new connection takes the silent one's place.
  await established(port, ca, '127.0.0.4');
  await settle();
  expect(quiet.closed).toBe(true);
  expect(await refused('shed')).toBe(1);
  const late = await silent(port, '127.0.0.5');
  await settle();
  expect(late.closed).toBe(true);
  expect(await refused('capacity')).toBe(1);
  expect(await metrics.registry.getSingleMetricAsString('signet_admission_connections_open')).toContain(
    'signet_admission_connections_open 2',
  );
});

it('stopping does not wait for connections still in their handshake (they carry no review)', async () => {
  const { port } = await start({ maxConnections: 10, maxConnectionsPerSource: 10 });
  const quiet = await silent(port, '127.0.0.2');
  const running = servers;
  servers = undefined;
  const started = Date.now();
  await running?.close(10_000);
  expect(Date.now() - started).toBeLessThan(5000);
  await settle();
  expect(quiet.closed).toBe(true);
});
