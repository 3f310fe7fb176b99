// Where KMS requests may go (issue 21, finding 1): a policy author writes the KMS URI, so
// `awskms://HOST:PORT/...` and `azurekms://HOST/...` must not make Signet send a signed request (the
// access key id and session token) or a Key Vault request to a host of their choosing. The
// attacker's host is a real HTTPS server on loopback that records every connection and header; its
// certificate is trusted (as a private CA would be), so on the old code the request did reach it.
// AWS KMS itself is moto's server (over https), allowed because the operator listed its endpoint.
import dns from 'node:dns';
import { createServer as createPlainServer, type Server as PlainServer } from 'node:http';
import { Agent, createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import * as testbed from '@signet/testbed';
import { KmsKeyStore } from '@signet/verifier';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKmsKeyFetcher } from '../src/index.js';
import { SETUP_TIMEOUT } from './support.js';

const ARN_TAIL = ':111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const SESSION_TOKEN = 'session-token-that-must-not-leave';

interface Recorded {
  connections: number;
  headers: Record<string, string | string[] | undefined>[];
}

async function listen(server: Server | PlainServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('KMS endpoints a policy author names', () => {
  let runDir = '';
  let group: testbed.ProcessGroup;
  let cert: testbed.ServerCertificate;
  let attacker: Server;
  let plain: PlainServer;
  let attackerPort = 0;
  let plainPort = 0;
  const recorded: Recorded = { connections: 0, headers: [] };
  const lookedUp: string[] = [];
  const realLookup = dns.lookup;
  const savedEnv = { ...process.env };

  beforeAll(async () => {
    runDir = await testbed.createRunDir('signet-kms-endpoints-');
    group = new testbed.ProcessGroup({ runDir, graceMs: 2_000 });
    cert = await testbed.mintServerCertificate(runDir, 'attacker');
    const { readFile } = await import('node:fs/promises');
    attacker = createServer({ key: await readFile(cert.keyPath), cert: cert.pem }, (request, response) => {
      recorded.headers.push(request.headers);
      response.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' });
      response.end('{"__type":"AccessDeniedException","message":"no"}');
    });
    attacker.on('secureConnection', () => {
      recorded.connections += 1;
    });
    attacker.on('connection', () => {
      recorded.connections += 1;
    });
    attackerPort = await listen(attacker);
    plain = createPlainServer((_request, response) => response.end('plain'));
    plainPort = await listen(plain);
    // Credentials as a Pod with a role has them: the session token is what must never leave.
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      AWS_SESSION_TOKEN: SESSION_TOKEN,
      AWS_REGION: 'us-east-1',
    });
    delete process.env.AWS_ENDPOINT_URL_KMS;
    delete process.env.AWS_ENDPOINT_URL;
    // Every name the process resolves from here on is recorded (node's sockets call dns.lookup).
    dns.lookup = ((hostname: string, ...rest: unknown[]) => {
      lookedUp.push(hostname);
      return (realLookup as (...args: unknown[]) => unknown)(hostname, ...rest);
    }) as typeof dns.lookup;
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    dns.lookup = realLookup;
    process.env = savedEnv;
    attacker?.close();
    plain?.close();
    await group?.stopAll();
    if (runDir !== '') await (await import('node:fs/promises')).rm(runDir, { recursive: true, force: true });
  });

  const store = (endpoints: string[] = []) =>
    new KmsKeyStore({
      timeoutMs: 3_000,
      fetcher: createKmsKeyFetcher({ endpoints, aws: { ca: cert.pem }, azure: { ca: cert.pem } }),
    });

  it.each([
    ['loopback with a port', () => `awskms://127.0.0.1:${attackerPort}/arn:aws:kms:us-east-1${ARN_TAIL}`],
    ['localhost', () => `awskms://localhost:${attackerPort}/alias/release`],
    ['a private address', () => `awskms://10.0.0.1/arn:aws:kms:us-east-1${ARN_TAIL}`],
    ['the metadata service', () => `awskms://169.254.169.254/arn:aws:kms:us-east-1${ARN_TAIL}`],
    ['a name of its own', () => `awskms://kms.attacker.example:${attackerPort}/alias/release`],
    ['an AWS name on another port', () => `awskms://kms.us-east-1.amazonaws.com:${attackerPort}/alias/x`],
    [
      'userinfo hiding the host',
      () => `awskms://kms.us-east-1.amazonaws.com@127.0.0.1:${attackerPort}/alias/x`,
    ],
  ])('refuses an awskms:// endpoint on %s: no request, no credential, no lookup', async (_what, uri) => {
    const before = recorded.connections;
    const lookups = lookedUp.length;
    const result = await store().lookup(uri());
    expect(recorded.headers.flatMap((h) => [h['x-amz-security-token']].flat())).not.toContain(SESSION_TOKEN);
    expect(recorded.connections).toBe(before);
    expect(lookedUp.slice(lookups)).toEqual([]);
    expect(result.kind).toBe('refused');
    expect(result.kind === 'refused' && result.error.message).toMatch(
      /KMS endpoint .* is not an AWS KMS endpoint; list it with --kms-endpoint to allow it/,
    );
    expect(result.kind === 'refused' && (result.error as { code?: string }).code).toBe(
      'SIGNET_KMS_ENDPOINT_REFUSED',
    );
  });

  it('refuses an azurekms:// vault that is not a Key Vault host: no request, no token asked', async () => {
    const scopes: unknown[] = [];
    const fetcher = createKmsKeyFetcher({
      azure: {
        ca: cert.pem,
        credential: {
          getToken: async (scope) => {
            scopes.push(scope);
            return { token: 'azure-token', expiresOnTimestamp: Date.now() + 3_600_000 };
          },
        },
        disableChallengeResourceVerification: true,
      },
    });
    const before = recorded.connections;
    const result = await new KmsKeyStore({ fetcher, timeoutMs: 3_000 }).lookup(
      `azurekms://127.0.0.1:${attackerPort}/release`,
    );
    expect(recorded.connections).toBe(before);
    expect(scopes).toEqual([]);
    expect(result.kind === 'refused' && result.error.message).toMatch(
      /KMS endpoint 127\.0\.0\.1:\d+ is not an Azure Key Vault or Managed HSM host; list it with --kms-endpoint/,
    );
  });

  it('says "could not reach" with a short cause for a listed endpoint that fails, not OpenSSL text', async () => {
    const endpoint = `127.0.0.1:${plainPort}`;
    const result = await store([endpoint]).lookup(`awskms://${endpoint}/arn:aws:kms:us-east-1${ARN_TAIL}`);
    expect(result.kind).toBe('unavailable');
    const message = result.kind === 'unavailable' ? result.error.message : '';
    expect(message).toContain(`could not reach ${endpoint}: the TLS handshake failed`);
    expect(message).not.toMatch(/wrong version|packet length|EPROTO|SSL routines/i);
    // The full error stays in the cause chain, for the log.
    let cause: unknown = result.kind === 'unavailable' ? result.error : undefined;
    const codes: unknown[] = [];
    for (let i = 0; i < 6 && cause instanceof Error; i++, cause = cause.cause)
      codes.push((cause as { code?: unknown }).code);
    expect(codes.some((code) => typeof code === 'string' && /SSL|EPROTO/.test(code))).toBe(true);
  });

  it('fetches from an endpoint the operator listed (moto as AWS KMS), refused when not listed', async () => {
    const tls = await testbed.mintServerCertificate(runDir, 'moto');
    const moto = await testbed.startMoto({ group, region: 'us-east-2', tls, accountId: '111122223333' });
    const port = moto.endpoint.split(':')[1] ?? '';
    const kms = new KMSClient({
      endpoint: `https://localhost:${port}`,
      region: 'us-east-2',
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
      requestHandler: new NodeHttpHandler({ httpsAgent: new Agent({ ca: tls.pem }) }),
    });
    const created = await kms.send(
      new CreateKeyCommand({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' }),
    );
    kms.destroy();
    const uri = `awskms://localhost:${port}/${created.KeyMetadata?.Arn}`;
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'testing', AWS_SECRET_ACCESS_KEY: 'testing' });
    delete process.env.AWS_SESSION_TOKEN;
    const listed = new KmsKeyStore({
      timeoutMs: 30_000,
      fetcher: createKmsKeyFetcher({ endpoints: [`localhost:${port}`], aws: { ca: tls.pem } }),
    });
    const found = await listed.lookup(uri);
    expect(found.kind === 'ready' && found.key.pem).toMatch(/BEGIN PUBLIC KEY/);
    const unlisted = new KmsKeyStore({ fetcher: createKmsKeyFetcher({ aws: { ca: tls.pem } }) });
    expect((await unlisted.lookup(uri)).kind).toBe('refused');
  });
});
