// Artifact Registry / GCR and ACR credentials with the real SDKs (google-auth-library,
// @azure/identity). What cannot run here is stood in for by loopback servers written for these
// tests: the GCE metadata server (GKE Workload Identity), Microsoft Entra's token endpoint
// (workload identity) and ACR's `/oauth2/exchange` and `/oauth2/token`. A service account key file
// is not tested: google-auth-library sends its assertion to a hard-coded Google host. The GCR-style registry is a real CNCF distribution that
// takes the access token as the password of `oauth2accesstoken`.

import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryClient } from '../src/client.js';
import { ACR_REFRESH_TOKEN_USER, AcrCredentials, isAzureRegistry } from '../src/cloud/acr.js';
import { GcpCredentials, isGoogleRegistry } from '../src/cloud/gcp.js';
import { RegistryError } from '../src/errors.js';
import { MemoryRegistry } from './helpers/memory-registry.js';
import { callWithin, readRequestBody, sendJson } from './helpers/server.js';
import { ensureTestTools, loadTestbed, type Testbed } from './helpers/testbed.js';

const SETUP_TIMEOUT = 30 * 60_000;
const saved = { ...process.env };

type Handler = (request: IncomingMessage, response: ServerResponse) => void | Promise<void>;
interface Listening {
  readonly host: string;
  readonly seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

async function listen(handler: Handler, tls?: { cert: string; key: string }): Promise<Listening> {
  const seen: Listening['seen'] = [];
  const wrapped = async (request: IncomingMessage, response: ServerResponse) => {
    const body = await readRequestBody(request);
    seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
    (request as IncomingMessage & { body?: string }).body = body;
    await handler(request, response);
  };
  const server = tls ? createHttpsServer(tls, wrapped) : createServer(wrapped);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
const bodyOf = (request: IncomingMessage) => (request as IncomingMessage & { body?: string }).body ?? '';

afterAll(() => {
  process.env = saved;
});

describe('GCP credentials (Artifact Registry, GCR) with google-auth-library', () => {
  let testbed: typeof Testbed;
  let group: Testbed.ProcessGroup | undefined;
  let runDir = '';
  let registry: Testbed.Registry;
  let metadata: Listening;
  const ACCESS_TOKEN = 'ya29.workload-identity-token';

  beforeAll(async () => {
    testbed = await loadTestbed();
    const { crane } = await ensureTestTools(testbed, ['registry', 'crane']);
    runDir = await testbed.createRunDir('signet-verifier-gcp-');
    group = new testbed.ProcessGroup({ runDir, graceMs: 2_000 });
    const open = await testbed.startRegistry({ referrers: false, group });
    await testbed.pushRandomImage(open, 'project/repo/app', 'v1', { crane, workDir: runDir });
    await open.stop();
    const htpasswd = join(runDir, 'htpasswd');
    await testbed.writeHtpasswd(htpasswd, { oauth2accesstoken: ACCESS_TOKEN });
    registry = await testbed.startRegistry({
      referrers: false,
      group,
      port: Number(open.host.split(':')[1]),
      htpasswdFile: htpasswd,
    });
    // The GKE metadata server, as far as google-auth-library asks it: detection and a token.
    metadata = await listen((request, response) => {
      if (request.headers['metadata-flavor'] !== 'Google') return sendJson(response, 403, {});
      const path = (request.url ?? '').split('?')[0];
      const headers = { 'metadata-flavor': 'Google' };
      if (path === '/computeMetadata/v1/instance') return void response.writeHead(200, headers).end('');
      if (path === '/computeMetadata/v1/instance/service-accounts/default/token') {
        return sendJson(
          response,
          200,
          { access_token: ACCESS_TOKEN, expires_in: 3599, token_type: 'Bearer' },
          headers,
        );
      }
      sendJson(response, 404, {}, headers);
    });
    for (const name of Object.keys(process.env))
      if (/^(GOOGLE_|GCE_|CLOUDSDK_)/.test(name)) delete process.env[name];
    process.env.HOME = runDir;
    process.env.GCE_METADATA_HOST = metadata.host;
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await metadata?.close();
    await group?.stopAll();
    if (runDir !== '' && !saved.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
  });

  const ref = () => ({ registry: registry.host, repository: 'project/repo/app', tag: 'v1' });

  it('reads a private registry with the Workload Identity token from the metadata server', async () => {
    const gcp = new GcpCredentials({ handles: (host) => host === registry.host });
    const client = new RegistryClient({ insecureHosts: [registry.host], credentialProviders: [gcp] });
    expect(await client.resolveDigest(ref(), callWithin(10_000))).toMatch(/^sha256:/);
    expect(metadata.seen.some((seen) => seen.url.includes('/service-accounts/default/token'))).toBe(true);
    const anonymous = new RegistryClient({ insecureHosts: [registry.host] });
    expect(
      (await anonymous.resolveDigest(ref(), callWithin(10_000)).catch((e: unknown) => e)) as RegistryError,
    ).toMatchObject({
      code: 'UNAUTHORIZED',
    });
  });

  it('fails naming the provider when there are no Google credentials', async () => {
    process.env.GCE_METADATA_HOST = '127.0.0.1:1';
    process.env.METADATA_SERVER_DETECTION = 'none';
    try {
      const gcp = new GcpCredentials({ handles: (host) => host === registry.host });
      const client = new RegistryClient({ insecureHosts: [registry.host], credentialProviders: [gcp] });
      const error = (await client
        .resolveDigest(ref(), callWithin(10_000))
        .catch((e: unknown) => e)) as RegistryError;
      expect(error).toBeInstanceOf(RegistryError);
      expect(error.code).toBe('CREDENTIALS_FAILED');
      expect(error.problem).toMatch(
        /^GCP credentials: getting an access token \(application default credentials\) failed: /,
      );
    } finally {
      process.env.GCE_METADATA_HOST = metadata.host;
      delete process.env.METADATA_SERVER_DETECTION;
    }
  });

  it('knows Google registry hosts', () => {
    expect(['gcr.io', 'eu.gcr.io', 'europe-west4-docker.pkg.dev'].every(isGoogleRegistry)).toBe(true);
    expect(new GcpCredentials().handles('gcr.io')).toBe(true);
    expect(
      ['gcr.io.evil.example', 'docker.pkg.dev.evil.example', 'registry.example'].some(isGoogleRegistry),
    ).toBe(false);
  });
});

describe('ACR credentials with Azure workload identity (@azure/identity)', () => {
  let testbed: typeof Testbed;
  let runDir = '';
  let entra: Listening;
  let acr: Listening;
  let ca: Testbed.PrivateCa;
  const ENTRA_TOKEN = 'entra-access-token';
  const REFRESH_TOKEN = 'acr-refresh-token';
  const ACCESS_TOKEN = 'acr-access-token';
  const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
  // The stand-in is not an authority Microsoft's instance discovery knows (it is not reachable here).
  const identityOptions = { disableInstanceDiscovery: true };
  const memory = new MemoryRegistry();
  memory.pushImage('team/app', 'v1');

  beforeAll(async () => {
    testbed = await loadTestbed();
    runDir = await testbed.createRunDir('signet-verifier-acr-');
    ca = await testbed.createPrivateCa(runDir, ['127.0.0.1', 'localhost'], 'entra');
    // Entra ID's token endpoint (and the OpenID metadata MSAL reads first), over TLS as MSAL requires.
    entra = await listen(
      (request, response) => {
        const url = new URL(request.url ?? '/', `https://${request.headers.host}`);
        const base = `https://${request.headers.host}/${TENANT}`;
        if (url.pathname.endsWith('/.well-known/openid-configuration')) {
          return sendJson(response, 200, {
            token_endpoint: `${base}/oauth2/v2.0/token`,
            authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
            issuer: `${base}/v2.0`,
            jwks_uri: `${base}/discovery/v2.0/keys`,
            response_modes_supported: ['query'],
            end_session_endpoint: `${base}/oauth2/v2.0/logout`,
          });
        }
        if (url.pathname.endsWith('/discovery/instance')) {
          return sendJson(response, 200, {
            tenant_discovery_endpoint: `${base}/v2.0/.well-known/openid-configuration`,
            metadata: [],
          });
        }
        if (url.pathname === `/${TENANT}/oauth2/v2.0/token`) {
          const form = new URLSearchParams(bodyOf(request));
          if (form.get('client_assertion') !== 'federated-service-account-token')
            return sendJson(response, 401, {});
          return sendJson(response, 200, {
            token_type: 'Bearer',
            expires_in: 3600,
            ext_expires_in: 3600,
            access_token: ENTRA_TOKEN,
          });
        }
        sendJson(response, 404, {});
      },
      { cert: ca.certificatePem, key: ca.keyPem },
    );
    // ACR: the exchange and token endpoints on the registry's own host, in front of the image store.
    acr = await listen((request, response) => {
      const url = new URL(request.url ?? '/', 'http://acr');
      const form = new URLSearchParams(bodyOf(request));
      if (url.pathname === '/oauth2/exchange') {
        if (form.get('access_token') !== ENTRA_TOKEN || form.get('tenant') !== TENANT)
          return sendJson(response, 401, {});
        return sendJson(response, 200, { refresh_token: REFRESH_TOKEN });
      }
      if (url.pathname === '/oauth2/token') {
        if (form.get('refresh_token') !== REFRESH_TOKEN) return sendJson(response, 401, {});
        return sendJson(response, 200, { access_token: ACCESS_TOKEN });
      }
      if (request.headers.authorization !== `Bearer ${ACCESS_TOKEN}`) {
        return sendJson(
          response,
          401,
          {},
          {
            'www-authenticate': `Bearer realm="http://${request.headers.host}/oauth2/token",service="${request.headers.host}"`,
          },
        );
      }
      memory.handler(request, response);
    });
    const tokenFile = join(runDir, 'azure-identity-token');
    await mkdir(runDir, { recursive: true });
    await writeFile(tokenFile, 'federated-service-account-token');
    // The environment the AKS workload identity webhook injects.
    for (const name of Object.keys(process.env)) if (name.startsWith('AZURE_')) delete process.env[name];
    Object.assign(process.env, {
      AZURE_CLIENT_ID: '8f8e1e6b-0000-4000-8000-000000000001',
      AZURE_TENANT_ID: TENANT,
      AZURE_FEDERATED_TOKEN_FILE: tokenFile,
      AZURE_AUTHORITY_HOST: `https://localhost:${entra.host.split(':')[1]}/`,
    });
    // The stand-in's certificate comes from a test CA; MSAL uses Node's default CA store.
    setDefaultCACertificates([...getCACertificates('default'), ca.caPem]);
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await Promise.all([entra?.close(), acr?.close()]);
    if (runDir !== '' && !saved.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
  });

  it('exchanges the workload identity token at the registry and reads with the refresh token', async () => {
    const provider = new AcrCredentials({ handles: (host) => host === acr.host, identityOptions });
    const client = new RegistryClient({ insecureHosts: [acr.host], credentialProviders: [provider] });
    const ref = { registry: acr.host, repository: 'team/app', tag: 'v1' };
    expect(await client.resolveDigest(ref, callWithin(20_000))).toMatch(/^sha256:/);
    const exchange = acr.seen.find((seen) => seen.url === '/oauth2/exchange');
    expect(Object.fromEntries(new URLSearchParams(exchange?.body))).toEqual({
      grant_type: 'access_token',
      service: acr.host,
      access_token: ENTRA_TOKEN,
      tenant: TENANT,
    });
    const token = acr.seen.find((seen) => seen.url.startsWith('/oauth2/token'));
    expect(new URLSearchParams(token?.body).get('grant_type')).toBe('refresh_token');
    // The Entra token went to Entra and to the registry's exchange, nowhere else.
    const carriers = [...acr.seen, ...entra.seen].filter(
      (seen) => seen.body.includes(ENTRA_TOKEN) || JSON.stringify(seen.headers).includes(ENTRA_TOKEN),
    );
    expect(carriers.map((seen) => seen.url)).toEqual(['/oauth2/exchange']);
    // A second read reuses the refresh token.
    const exchanges = acr.seen.filter((seen) => seen.url === '/oauth2/exchange').length;
    await client.resolveDigest(ref, callWithin(20_000));
    expect(acr.seen.filter((seen) => seen.url === '/oauth2/exchange')).toHaveLength(exchanges);
    expect(ACR_REFRESH_TOKEN_USER).toBe('00000000-0000-0000-0000-000000000000');
  });

  it('fails naming the provider when the exchange is refused', async () => {
    const provider = new AcrCredentials({
      handles: (host) => host === acr.host,
      tenantId: 'another-tenant',
      identityOptions,
    });
    const client = new RegistryClient({ insecureHosts: [acr.host], credentialProviders: [provider] });
    const error = (await client
      .resolveDigest({ registry: acr.host, repository: 'team/app', tag: 'v1' }, callWithin(20_000))
      .catch((e: unknown) => e)) as RegistryError;
    expect(error.code).toBe('CREDENTIALS_FAILED');
    expect(error.problem).toBe('ACR credentials: the registry refused the token exchange (401)');
  });

  it('knows ACR hosts', () => {
    expect(isAzureRegistry('signet.azurecr.io')).toBe(true);
    expect(new AcrCredentials().handles('signet.azurecr.io')).toBe(true);
    expect(isAzureRegistry('azurecr.io.evil.example')).toBe(false);
  });
});
