// Issue 21, Deliver item 1: the admission port can know its caller. With `--client-ca-file`, the
// API server presents the client certificate its AdmissionConfiguration's kubeConfigFile names
// (e2e/test/admission-mtls.test.ts runs that against a real kube-apiserver); here the TLS
// contract of each mode on a real Signet: who gets a review answered and who is refused during
// the handshake, and that a changed CA file is taken without a restart.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createCertificateAuthority,
  type IssuedCertificate,
  issueClientCertificate,
} from '../../src/certificates.js';
import { type AttackTarget, startTarget } from '../attack/server.js';
import { reviewFixture } from '../helpers.js';

let dir = '';
let apiServerCa: IssuedCertificate;
let otherCa: IssuedCertificate;
let apiServer: IssuedCertificate;
let impostor: IssuedCertificate;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signet-client-auth-'));
  apiServerCa = await createCertificateAuthority('kube-apiserver-client-ca', 1);
  otherCa = await createCertificateAuthority('someone-else', 1);
  apiServer = await issueClientCertificate(apiServerCa, 'kube-apiserver', 1);
  impostor = await issueClientCertificate(otherCa, 'kube-apiserver', 1);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A review over a fresh TLS connection with `client`'s certificate (or none): its status, or the TLS failure. */
function review(target: AttackTarget, client?: IssuedCertificate): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: target.port,
        path: '/validate?timeout=10s',
        method: 'POST',
        ca: target.ca,
        agent: false,
        ...(client ? { cert: client.cert, key: client.key } : {}),
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end(reviewFixture('replicaset-scale-down.json'));
  });
}

async function withTarget(
  name: string,
  flags: Record<string, string>,
  test: (target: AttackTarget) => Promise<void>,
): Promise<void> {
  const own = await mkdtemp(join(dir, `${name}-`));
  const target = await startTarget(own, flags);
  try {
    await test(target);
  } finally {
    await target.signet.stop(0);
  }
}

describe('--client-ca-file', () => {
  it('required (the default): only a certificate from the CA gets a review answered', async () => {
    const caFile = join(dir, 'required-ca.crt');
    await writeFile(caFile, apiServerCa.cert);
    await withTarget('required', { 'client-ca-file': caFile }, async (target) => {
      expect(await review(target, apiServer)).toBe(200);
      // TLS's own alert, which the API server's log then quotes ("tls: certificate required").
      expect(await review(target)).toBe('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED');
      expect(await review(target, impostor)).not.toBe(200);
      const refused = await target.metrics.registry.getSingleMetricAsString(
        'signet_admission_connections_refused_total',
      );
      expect(refused).toMatch(/reason="client-certificate"\} 1/);
    });
  });

  it('if-given: a client without a certificate is served, one with a certificate from another CA is not', async () => {
    const caFile = join(dir, 'if-given-ca.crt');
    await writeFile(caFile, apiServerCa.cert);
    await withTarget('if-given', { 'client-ca-file': caFile, 'client-auth': 'if-given' }, async (target) => {
      expect(await review(target, apiServer)).toBe(200);
      expect(await review(target)).toBe(200);
      expect(await review(target, impostor)).not.toBe(200);
      const callers = await target.metrics.registry.getSingleMetricAsString(
        'signet_admission_connections_total',
      );
      expect(callers).toMatch(/client="verified"\} 1/);
      expect(callers).toMatch(/client="anonymous"\} 1/);
    });
  });

  it('takes a changed CA file without a restart, and keeps the last good one when the file breaks', async () => {
    const caFile = join(dir, 'reload-ca.crt');
    await writeFile(caFile, apiServerCa.cert);
    await withTarget('reload', { 'client-ca-file': caFile }, async (target) => {
      expect(await review(target, apiServer)).toBe(200);
      // As a mounted Secret or ConfigMap changes: the file is replaced.
      await writeFile(caFile, otherCa.cert);
      const deadline = Date.now() + 5000;
      while ((await review(target, impostor)) !== 200 && Date.now() < deadline) await sleep(100);
      expect(await review(target, impostor)).toBe(200);
      expect(await review(target, apiServer)).not.toBe(200);
      await writeFile(caFile, 'not a certificate');
      await sleep(1000);
      expect(await review(target, impostor)).toBe(200);
    });
  });

  it('refuses a file that holds no CA certificate before listening', async () => {
    const caFile = join(dir, 'broken-ca.crt');
    await writeFile(caFile, apiServer.key);
    await expect(
      startTarget(await mkdtemp(join(dir, 'broken-')), { 'client-ca-file': caFile }),
    ).rejects.toThrow(/broken-ca\.crt: no PEM certificate/);
  });
});
