// azurekms:// keys. The registries these machines reach serve no Azure Key Vault emulator (the
// lowkey-vault application is not on Maven Central), so a loopback HTTPS server written here
// STANDS IN for Key Vault, speaking the REST call Signet makes (GET /keys/{name}[/{version}]) and
// Key Vault's challenge: an unauthenticated request gets 401 with `WWW-Authenticate: Bearer
// authorization=..., resource=...`, then the bearer token is required. Signet's side is the real
// @azure/keyvault-keys client; the credential is injected (Entra ID cannot be reached), and the
// challenge-resource check is off because the stand-in's host is 127.0.0.1, as the Azure SDK
// documents for emulators. The image is signed by the real cosign with the same private key
// imported into a cosign key file (cosign's azurekms provider needs Entra ID).
import { generateKeyPairSync } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import * as testbed from '@signet/testbed';
import { KmsKeyStore } from '@signet/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKmsKeyFetcher } from '../src/index.js';
import { type Bench, failure, kmsPolicy, SETUP_TIMEOUT, startBench } from './support.js';

const TOKEN = 'signet-azure-test-token';

describe('azurekms:// keys against a Key Vault REST stand-in', () => {
  let bench: Bench;
  let server: Server;
  let host = '';
  let ca = '';
  const seen: string[] = [];
  const signing = generateKeyPairSync('ec', { namedCurve: 'P-256' });

  beforeAll(async () => {
    bench = await startBench('signet-kms-azure-');
    const tls = await testbed.mintServerCertificate(bench.runDir, 'keyvault');
    ca = tls.pem;
    const jwk = signing.publicKey.export({ format: 'jwk' });
    server = createServer(
      { cert: await readFile(tls.certPath), key: await readFile(tls.keyPath) },
      (request, response) => {
        const url = new URL(request.url ?? '/', 'https://x');
        seen.push(`${request.method} ${url.pathname} auth=${request.headers.authorization ? 'yes' : 'no'}`);
        if (request.headers.authorization !== `Bearer ${TOKEN}`) {
          response.writeHead(401, {
            'WWW-Authenticate':
              'Bearer authorization="https://login.microsoftonline.com/tenant", resource="https://vault.azure.net"',
          });
          return response.end();
        }
        const match = /^\/keys\/([^/]+)(?:\/([^/]*))?$/.exec(url.pathname);
        if (match?.[1] !== 'cosign') {
          response.writeHead(404, { 'content-type': 'application/json' });
          return response.end(JSON.stringify({ error: { code: 'KeyNotFound', message: 'no such key' } }));
        }
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            key: {
              kid: `https://${host}/keys/cosign/v1`,
              kty: 'EC',
              crv: 'P-256',
              x: jwk.x,
              y: jwk.y,
              key_ops: ['sign', 'verify'],
            },
            attributes: { enabled: true },
          }),
        );
      },
    ).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    host = `127.0.0.1:${(server.address() as { port: number }).port}`;
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    server?.close();
    await bench?.stop();
  });

  const fetcher = () =>
    createKmsKeyFetcher({
      // The emulated vault is on loopback: listed, as an operator lists an emulator.
      endpoints: [host],
      azure: {
        credential: { getToken: async () => ({ token: TOKEN, expiresOnTimestamp: Date.now() + 3_600_000 }) },
        ca,
        disableChallengeResourceVerification: true,
      },
    });

  it('answers the challenge, reads the JSON Web Key and verifies what its key signed', async () => {
    const pemFile = join(bench.runDir, 'azure-signing.pem');
    await writeFile(pemFile, signing.privateKey.export({ format: 'pem', type: 'pkcs8' }));
    const key = await bench.cosign.importKeyPair(pemFile, join(bench.runDir, 'azure-key'), 'pw');
    const image = await bench.push('team/azure');
    await bench.cosign.signLegacyKeyed(image, key);
    const store = new KmsKeyStore({ timeoutMs: 30_000, fetcher: fetcher() });
    expect(failure(await bench.verify(kmsPolicy(`azurekms://${host}/cosign`), image, store))).toBe('passed');
    expect(seen.slice(0, 2)).toEqual(['GET /keys/cosign/ auth=no', 'GET /keys/cosign/ auth=yes']);
  });

  it('reports a key the vault does not have', async () => {
    const store = new KmsKeyStore({ timeoutMs: 30_000, fetcher: fetcher() });
    const got = await store.lookup(`azurekms://${host}/missing`);
    expect(got.kind === 'unavailable' && got.error.message).toMatch(/no such key/);
  });
});
