// A real Signet (the composition root `signet serve` uses) on loopback for the attack tests, with a
// policy for a registry that does not exist (`.invalid`), so that no review waits on a network, and
// raw HTTPS helpers an attacker would use.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { createCertificateAuthority, issueServingCertificate } from '../../src/certificates.js';
import { serveConfigFrom } from '../../src/commands/serve-config.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { SignetMetrics } from '../../src/metrics.js';
import { type RunningSignet, startSignet } from '../../src/signet.js';

export interface AttackTarget {
  readonly signet: RunningSignet;
  readonly port: number;
  readonly ca: string;
  readonly metrics: SignetMetrics;
}

export async function startTarget(
  dir: string,
  flags: Record<string, string | string[]> = {},
  /** More policy YAML documents, and a logger to read what Signet logs. */
  options: { readonly policies?: string; readonly logger?: Logger } = {},
): Promise<AttackTarget> {
  const ca = await createCertificateAuthority('signet-attack', 1);
  const serving = await issueServingCertificate(ca, ['127.0.0.1'], 1);
  await writeFile(join(dir, 'tls.crt'), serving.cert);
  await writeFile(join(dir, 'tls.key'), serving.key);
  await writeFile(
    join(dir, 'policy.yaml'),
    `apiVersion: policy.sigstore.dev/v1beta1\nkind: ClusterImagePolicy\nmetadata: {name: all}\nspec:\n  images: [{glob: "attack.invalid/**"}]\n  authorities: [{static: {action: pass}}]\n${options.policies ?? ''}`,
  );
  const metrics = new SignetMetrics({ defaultMetrics: false });
  const config = serveConfigFrom(
    {
      port: '0',
      'ops-port': '0',
      host: '127.0.0.1',
      'policy-file': [join(dir, 'policy.yaml')],
      'tls-cert-file': join(dir, 'tls.crt'),
      'tls-key-file': join(dir, 'tls.key'),
      ...flags,
    },
    {},
  );
  const signet = await startSignet(config, {
    logger: options.logger ?? createLogger({ level: 'silent' }),
    metrics,
  });
  return { signet, port: signet.servers.port, ca: ca.cert, metrics };
}

/** A raw TLS connection to the admission port, for requests no well-behaved client sends. */
export function rawConnection(target: AttackTarget): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: target.port, ca: target.ca }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** What arrives on `socket` until it closes or `ms` pass: the HTTP status, and when it came. */
export function statusOf(
  socket: TLSSocket,
  ms: number,
): Promise<{ status: number | undefined; afterMs: number; closed: boolean }> {
  const started = Date.now();
  return new Promise((resolve) => {
    let text = '';
    const done = (closed: boolean) => {
      clearTimeout(timer);
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({ status: match ? Number(match[1]) : undefined, afterMs: Date.now() - started, closed });
    };
    const timer = setTimeout(() => done(false), ms);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.once('close', () => done(true));
    socket.once('error', () => undefined);
  });
}
