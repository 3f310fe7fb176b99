import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createRunDir } from '../src/process.ts';
import { createPrivateCa, mintServerCertificate } from '../src/tls.ts';

// Certificates minted in-process, checked by a real TLS handshake (Node's OpenSSL) against a
// loopback HTTPS server: trusted with the CA given, refused without it.

const servers: Server[] = [];
afterAll(() => {
  for (const server of servers) server.close();
});

async function serve(cert: string, key: string): Promise<number> {
  const server = createServer({ cert, key }, (_, response) => response.end('ok'));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function get(host: string, port: number, ca: string | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const call = request(
      { host: '127.0.0.1', servername: host === '127.0.0.1' ? undefined : host, port, ca, timeout: 10_000 },
      (response) => {
        response.setEncoding('utf8');
        let body = '';
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => resolve(body));
      },
    );
    call.on('error', reject);
    call.end();
  });
}

describe('createPrivateCa', () => {
  it('issues a server certificate for its hosts that clients trust only with the CA', async () => {
    const dir = await createRunDir('signet-tls-test-');
    const ca = await createPrivateCa(dir, ['127.0.0.1', 'localhost'], 'registry');
    expect(await readFile(ca.caFile, 'utf8')).toBe(ca.caPem);
    expect(await readFile(ca.keyFile, 'utf8')).toBe(ca.keyPem);
    const certificate = new X509Certificate(ca.certificatePem);
    const authority = new X509Certificate(ca.caPem);
    expect(certificate.checkIssued(authority)).toBe(true);
    expect(certificate.verify(authority.publicKey)).toBe(true);
    expect(authority.ca).toBe(true);
    expect(certificate.ca).toBe(false);
    expect(certificate.subjectAltName).toBe('IP Address:127.0.0.1, DNS:localhost');
    const port = await serve(ca.certificatePem, ca.keyPem);
    expect(await get('127.0.0.1', port, ca.caPem)).toBe('ok');
    expect(await get('localhost', port, ca.caPem)).toBe('ok');
    await expect(get('127.0.0.1', port, undefined)).rejects.toThrow(/self-signed|unable to (get|verify)/);
  });
});

describe('mintServerCertificate', () => {
  it('makes a self-signed certificate for 127.0.0.1 and localhost that is its own CA', async () => {
    const dir = await createRunDir('signet-tls-test-');
    const minted = await mintServerCertificate(dir, 'kms');
    expect(await readFile(minted.certPath, 'utf8')).toBe(minted.pem);
    expect(await readFile(minted.keyPath, 'utf8')).toBe(minted.keyPem);
    const certificate = new X509Certificate(minted.pem);
    expect(certificate.subject).toBe('CN=kms');
    expect(certificate.ca).toBe(true);
    const port = await serve(minted.pem, minted.keyPem);
    expect(await get('127.0.0.1', port, minted.pem)).toBe('ok');
    await expect(get('127.0.0.1', port, undefined)).rejects.toThrow(/self-signed|unable to (get|verify)/);
  });
});
