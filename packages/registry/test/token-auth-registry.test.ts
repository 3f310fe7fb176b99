// Bearer-token authentication against a REAL registry: CNCF distribution configured with
// `auth: token` (realm, service, issuer, rootcertbundle) and a token server written here (node:http
// + node:crypto signing ES256 JWTs with a key whose self-signed certificate, minted by
// @signet/testbed, is the registry's root certificate bundle). Only the token server is ours; the challenges,
// token checks and 401s are distribution's.

import { createPrivateKey, randomUUID, sign } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryClient } from '../src/client.js';
import { RegistryError } from '../src/errors.js';
import { Keychain } from '../src/keychain.js';
import { dispatchFetch } from '../src/net/request.js';
import { sha256 } from './helpers/memory-registry.js';
import { callWithin, sendJson, startServer, type TestServer } from './helpers/server.js';
import { ensureTestTools, loadTestbed, type Testbed } from './helpers/testbed.js';

const SERVICE = 'signet-test-registry';
const ISSUER = 'signet-test-token-issuer';
const USER = 'signet-robot';
const PASSWORD = 'correct-horse-battery-staple';
const SETUP_TIMEOUT = 30 * 60_000;
const TEST_TIMEOUT = 60_000;

const base64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

interface Issuer {
  readonly privateKeyPem: string;
  /** DER of the self-signed certificate, for the JWT `x5c` header. */
  readonly certificateDer: Buffer;
  readonly certificatePath: string;
}

/** An EC P-256 key and a self-signed certificate for it, minted by @signet/testbed. */
async function mintIssuer(testbed: typeof Testbed, dir: string): Promise<Issuer> {
  const certificate = await testbed.mintServerCertificate(dir, ISSUER, []);
  const body = certificate.pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
  return {
    privateKeyPem: certificate.keyPem,
    certificateDer: Buffer.from(body, 'base64'),
    certificatePath: certificate.certPath,
  };
}

interface Access {
  type: string;
  name: string;
  actions: string[];
}

/** A JWT distribution accepts: ES256, x5c = the trusted certificate, `aud` = its service. */
function issueToken(issuer: Issuer, access: Access[], audience: string): string {
  const now = Math.floor(Date.now() / 1000);
  const header = { typ: 'JWT', alg: 'ES256', x5c: [issuer.certificateDer.toString('base64')] };
  const claims = {
    iss: ISSUER,
    sub: USER,
    aud: audience,
    exp: now + 300,
    nbf: now - 10,
    iat: now,
    jti: randomUUID(),
    access,
  };
  const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const key = createPrivateKey(issuer.privateKeyPem);
  const signature = sign('sha256', Buffer.from(signingInput), { key, dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${base64url(signature)}`;
}

/** `repository:team/app:pull,push` -> access entries. */
function requestedAccess(scopes: string[]): Access[] {
  return scopes.flatMap((scope) => {
    const [type = '', ...rest] = scope.split(':');
    const actions = rest.pop()?.split(',') ?? [];
    return type === 'repository' ? [{ type, name: rest.join(':'), actions }] : [];
  });
}

describe('Bearer token auth against distribution with `auth: token`', () => {
  let testbed: typeof Testbed;
  let group: Testbed.ProcessGroup | undefined;
  let runDir = '';
  let tokenServer: TestServer;
  let registryHost = '';
  let crane = '';
  let digest = '';
  /** Tokens for the wrong audience: a token server and registry that disagree. */
  let misconfigured = false;
  const dockerConfig = () =>
    JSON.stringify({
      auths: { [registryHost]: { auth: Buffer.from(`${USER}:${PASSWORD}`).toString('base64') } },
    });

  beforeAll(async () => {
    testbed = await loadTestbed();
    const tools = await ensureTestTools(testbed, ['registry', 'crane']);
    crane = tools.crane;
    runDir = await testbed.createRunDir('signet-verifier-token-auth-');
    const issuer = await mintIssuer(testbed, runDir);
    tokenServer = await startServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://token');
      const authorization = request.headers.authorization;
      const expected = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
      if (url.pathname !== '/token' || url.searchParams.get('service') !== SERVICE)
        return sendJson(response, 400, {});
      if (authorization !== undefined && authorization !== expected)
        return sendJson(response, 401, { details: 'bad credentials' });
      // Anonymous callers get a valid token that grants nothing, as Docker Hub does for private repositories.
      const access = authorization === undefined ? [] : requestedAccess(url.searchParams.getAll('scope'));
      const token = issueToken(issuer, access, misconfigured ? 'some-other-service' : SERVICE);
      sendJson(response, 200, { token, expires_in: 300, issued_at: new Date().toISOString() });
    });

    const port = await testbed.freePort();
    registryHost = `127.0.0.1:${port}`;
    const storage = join(runDir, 'storage');
    await mkdir(storage, { recursive: true });
    const configFile = async (name: string, auth: string[]) => {
      const path = join(runDir, name);
      const lines = [
        'version: 0.1',
        'log:',
        '  level: info',
        '  accesslog:',
        '    disabled: true',
        'storage:',
        '  filesystem:',
        `    rootdirectory: ${JSON.stringify(storage)}`,
        'http:',
        `  addr: ${registryHost}`,
        ...auth,
        '',
      ];
      await writeFile(path, lines.join('\n'));
      return path;
    };
    group = new testbed.ProcessGroup({ runDir, graceMs: 2_000 });
    const startRegistry = async (config: string, readyStatus: number) =>
      (group as Testbed.ProcessGroup).start({
        name: 'registry',
        command: tools.registry,
        args: ['serve', config],
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: runDir,
          OTEL_TRACES_EXPORTER: 'none',
          OTEL_SDK_DISABLED: 'true',
        },
        ready: { kind: 'http', url: `http://${registryHost}/v2/`, status: readyStatus },
      });
    // The image is pushed before token auth is switched on: crane (go-containerregistry) refuses a
    // realm on a loopback address other than the registry's own host:port, and the token server
    // cannot share distribution's port.
    const open = await startRegistry(await configFile('open.yml', []), 200);
    digest = await testbed.pushRandomImage({ host: registryHost }, 'team/app', 'v1', {
      crane,
      workDir: runDir,
    });
    await open.stop();
    await startRegistry(
      await configFile('token-auth.yml', [
        'auth:',
        '  token:',
        `    realm: ${tokenServer.url}/token`,
        `    service: ${SERVICE}`,
        `    issuer: ${ISSUER}`,
        `    rootcertbundle: ${JSON.stringify(issuer.certificatePath)}`,
      ]),
      401,
    );
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await group?.stopAll();
    await tokenServer?.close();
    if (runDir !== '' && !process.env.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
  });

  /** A client that counts requests per host; credentials from a Docker config.json. */
  function client(withCredentials: boolean) {
    const requests: string[] = [];
    const registry = new RegistryClient({
      insecureHosts: [registryHost, tokenServer.host],
      ...(withCredentials ? { credentials: Keychain.fromDockerConfig(dockerConfig()) } : {}),
      fetch: (url, init) => {
        requests.push(`${init.method} ${url.host}${url.pathname}`);
        return dispatchFetch(url, init);
      },
    });
    const count = (host: string) => requests.filter((request) => request.includes(` ${host}/`)).length;
    return { registry, requests, count };
  }
  const repo = () => ({ registry: registryHost, repository: 'team/app' });

  it(
    'reads with a token obtained with Basic credentials, and reuses the token',
    async () => {
      misconfigured = false;
      const { registry, requests, count } = client(true);
      const before = tokenServer.requests.length;
      expect(await registry.resolveDigest({ ...repo(), tag: 'v1' }, callWithin(10_000))).toBe(digest);
      const fetched = await registry.getManifest(repo(), digest, callWithin(10_000));
      if (fetched.manifest.kind !== 'manifest') throw new Error('expected an image manifest');
      const layer = fetched.manifest.layers[0]?.digest ?? '';
      expect(sha256(await registry.getBlob(repo(), layer, callWithin(10_000)))).toBe(layer);

      const tokenRequests = tokenServer.requests.slice(before);
      expect(tokenRequests).toHaveLength(1);
      expect(tokenRequests[0]?.headers.authorization).toBe(
        `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`,
      );
      expect(new URL(tokenRequests[0]?.url ?? '', 'http://x').searchParams.getAll('scope')).toEqual([
        'repository:team/app:pull',
      ]);
      // One 401 with the challenge, then three authorized requests.
      expect(count(registryHost)).toBe(4);
      expect(requests[0]).toBe(`HEAD ${registryHost}/v2/team/app/manifests/v1`);
    },
    TEST_TIMEOUT,
  );

  it(
    'reports a token that grants nothing (anonymous) as UNAUTHORIZED after one retry',
    async () => {
      misconfigured = false;
      const { registry, count } = client(false);
      const error = await registry.getManifest(repo(), digest, callWithin(10_000)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RegistryError);
      expect((error as RegistryError).code).toBe('UNAUTHORIZED');
      expect((error as RegistryError).message).toContain('insufficient_scope');
      expect(count(registryHost)).toBe(2);
    },
    TEST_TIMEOUT,
  );

  it(
    'reports credentials the token server refuses, without printing them',
    async () => {
      misconfigured = false;
      const registry = new RegistryClient({
        insecureHosts: [registryHost, tokenServer.host],
        credentials: new Keychain([
          {
            key: registryHost,
            credential: { kind: 'basic', username: USER, password: 'wrong-password' },
            origin: 'test',
          },
        ]),
      });
      const error = (await registry
        .getManifest(repo(), digest, callWithin(10_000))
        .catch((e: unknown) => e)) as RegistryError;
      expect(error.code).toBe('UNAUTHORIZED');
      expect(error.message).toContain('refused the credentials (401)');
      expect(error.message).not.toContain('wrong-password');
    },
    TEST_TIMEOUT,
  );

  it(
    'ends the 401 loop of a registry that rejects every token its token server issues',
    async () => {
      misconfigured = true;
      const { registry, count } = client(true);
      const started = Date.now();
      const error = (await registry
        .getManifest(repo(), digest, callWithin(10_000))
        .catch((e: unknown) => e)) as RegistryError;
      expect(error.code).toBe('AUTH_LOOP');
      expect(error.message).toContain(`registry ${registryHost} repository team/app`);
      expect(count(registryHost)).toBe(2);
      expect(count(tokenServer.host)).toBe(1);
      expect(Date.now() - started).toBeLessThan(5_000);
      misconfigured = false;
    },
    TEST_TIMEOUT,
  );
});
