// gcpkms:// keys. No Cloud KMS emulator is published on the registries these machines reach, so a
// loopback server written here STANDS IN for Cloud KMS, speaking the REST API Signet calls
// (cryptoKeys.get, cryptoKeyVersions.list, cryptoKeyVersions.getPublicKey) and the metadata
// server's token endpoint, which is how GKE Workload Identity hands out credentials. Everything on
// Signet's side is real: google-auth-library's Application Default Credentials find the metadata
// server (GCE_METADATA_HOST) and take an access token from it. cosign's gcpkms provider speaks gRPC to Google and cannot be pointed at
// this stand-in, so the image is signed by the real cosign with the same private key imported
// into a cosign key file, and verified through the gcpkms:// URI.
import { generateKeyPairSync } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { KmsKeyStore } from '@signet/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKmsKeyFetcher } from '../src/index.js';
import { type Bench, failure, kmsPolicy, SETUP_TIMEOUT, startBench } from './support.js';

const KEY = 'projects/signet/locations/global/keyRings/release/cryptoKeys/cosign';

describe('gcpkms:// keys against a Cloud KMS REST stand-in', () => {
  let bench: Bench;
  let server: Server;
  let base = '';
  const requests: string[] = [];
  const tokens = new Set<string>();
  const signing = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });

  const send = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  /** The metadata server: GKE Workload Identity hands out access tokens here. */
  function metadataServer(request: IncomingMessage, response: ServerResponse, path: string) {
    expect(request.headers['metadata-flavor']).toBe('Google');
    response.setHeader('Metadata-Flavor', 'Google');
    if (path === '/computeMetadata/v1/project/project-id') return void response.end('signet');
    if (path.endsWith('/service-accounts/default/token')) {
      const token = `t-${tokens.size + 1}`;
      tokens.add(token);
      return send(response, 200, { access_token: token, token_type: 'Bearer', expires_in: 3600 });
    }
    send(response, 200, {});
  }

  /** Cloud KMS's REST API: the three calls Signet makes. */
  function cloudKms(url: URL, response: ServerResponse) {
    const path = url.pathname.replace(/^\/v1\//, '');
    if (path === KEY) return send(response, 200, { name: KEY, purpose: 'ASYMMETRIC_SIGN' });
    if (path === `${KEY}/cryptoKeyVersions`) {
      expect(url.searchParams.get('filter')).toBe('state=ENABLED');
      return send(response, 200, {
        cryptoKeyVersions: [{ name: `${KEY}/cryptoKeyVersions/2`, state: 'ENABLED' }],
      });
    }
    const version = /cryptoKeyVersions\/(\d+)\/publicKey$/.exec(path)?.[1];
    if (version === undefined || !path.startsWith(KEY)) return send(response, 404, { error: { code: 404 } });
    const key = version === '2' ? signing : other;
    send(response, 200, {
      pem: key.publicKey.export({ format: 'pem', type: 'spki' }),
      algorithm: 'EC_SIGN_P256_SHA256',
    });
  }

  function standIn(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? '/', 'http://x');
    requests.push(`${request.method} ${url.pathname}`);
    if (url.pathname.startsWith('/computeMetadata/')) return metadataServer(request, response, url.pathname);
    const auth = request.headers.authorization?.replace(/^Bearer /, '') ?? '';
    if (!tokens.has(auth)) return send(response, 401, { error: { code: 401, message: 'no credentials' } });
    cloudKms(url, response);
  }

  beforeAll(async () => {
    bench = await startBench('signet-kms-gcp-');
    server = createServer((request, response) => standIn(request, response)).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    delete process.env.GOOGLE_APPLICATION_CREDENTIALS;
    process.env.GCE_METADATA_HOST = base.replace('http://', '');
    // As on GKE, where the metadata server is known to be there: no detection ping, whose short
    // timeout a loaded CI machine can miss.
    process.env.METADATA_SERVER_DETECTION = 'assume-present';
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    server?.close();
    await bench?.stop();
  });

  it('fetches the newest enabled version with ADC credentials and verifies what its key signed', async () => {
    const pemFile = join(bench.runDir, 'gcp-signing.pem');
    await writeFile(pemFile, signing.privateKey.export({ format: 'pem', type: 'pkcs8' }));
    const key = await bench.cosign.importKeyPair(pemFile, join(bench.runDir, 'gcp-key'), 'pw');
    const image = await bench.push('team/gcp');
    await bench.cosign.signLegacyKeyed(image, key);
    const store = new KmsKeyStore({
      timeoutMs: 30_000,
      fetcher: createKmsKeyFetcher({ gcp: { endpoint: base } }),
    });
    expect(failure(await bench.verify(kmsPolicy(`gcpkms://${KEY}`), image, store))).toBe('passed');
    expect(requests).toContain(`GET /v1/${KEY}/cryptoKeyVersions/2/publicKey`);
    expect(tokens.size).toBeGreaterThan(0);
    // An explicit version that holds another key does not verify it.
    const pinned = `gcpkms://${KEY}/cryptoKeyVersions/1`;
    expect(failure(await bench.verify(kmsPolicy(pinned), image, store))).toMatch(/no valid signature/);
  });

  it("verifies policy-controller's Cloud KMS example once its template fields are filled in", async () => {
    const { readFile } = await import('node:fs/promises');
    const { parse } = await import('yaml');
    const { parseClusterImagePolicy } = await import('@signet/k8s-types');
    const testbed = await import('@signet/testbed');
    const root = await testbed.policyControllerModule();
    const text = await readFile(join(root, 'examples/policies/signed-by-gcp-kms-key.yaml'), 'utf8');
    // The example's shell-style placeholders (`$` + `{PROJECT_ID}`, ...), filled in.
    const fields: Record<string, string> = {
      PROJECT_ID: 'signet',
      REGION: 'global',
      KEY_RING: 'release',
      KEY_NAME: 'cosign',
      KEY_VERSION: '2',
    };
    const filled = text.replace(/\$\{([A-Z_]+)\}/g, (whole, field: string) => fields[field] ?? whole);
    const document = parse(filled);
    // As the AWS example: its `ctlog.url: https://rekor.sigstore.dev` needs an entry in the public
    // log, which cannot be made here; the KMS key is what this test is about.
    delete document.spec.authorities[0].ctlog;
    const pemFile = join(bench.runDir, 'gcp-example.pem');
    await writeFile(pemFile, signing.privateKey.export({ format: 'pem', type: 'pkcs8' }));
    const key = await bench.cosign.importKeyPair(pemFile, join(bench.runDir, 'gcp-example-key'), 'pw');
    const image = await bench.push('team/gcp-example');
    await bench.cosign.signLegacyKeyed(image, key);
    const store = new KmsKeyStore({
      timeoutMs: 30_000,
      fetcher: createKmsKeyFetcher({ gcp: { endpoint: base } }),
    });
    expect(failure(await bench.verify(parseClusterImagePolicy(document), image, store))).toBe('passed');
  });

  it('reports what Cloud KMS answered for a key it does not have', async () => {
    const store = new KmsKeyStore({
      timeoutMs: 30_000,
      fetcher: createKmsKeyFetcher({ gcp: { endpoint: base } }),
    });
    const missing = `gcpkms://projects/p/locations/l/keyRings/r/cryptoKeys/none`;
    const got = await store.lookup(missing);
    expect(got.kind === 'unavailable' && got.error.message).toMatch(/Cloud KMS answered 404/);
  });
});
