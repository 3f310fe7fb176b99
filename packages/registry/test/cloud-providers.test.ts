// The cloud providers' own logic (caching, deadlines, what counts as a usable answer) with the
// SDK replaced through the providers' `loadSdk` seam, plus ECR Public with the real AWS SDK against
// a loopback stand-in of the ECR Public API written here (moto does not implement ECR Public).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RegistryClient } from '../src/client.js';
import { AcrCredentials } from '../src/cloud/acr.js';
import { EcrCredentials } from '../src/cloud/ecr.js';
import { GcpCredentials } from '../src/cloud/gcp.js';
import { CredentialCache, providerFailure, withinCall } from '../src/cloud/provider.js';
import { CLOUD_PROVIDER_NAMES, createCloudProviders, isCloudProviderName } from '../src/cloud/providers.js';
import { RegistryError } from '../src/errors.js';
import { callWithin, readRequestBody, sendJson, startServer, type TestServer } from './helpers/server.js';

const repository = { registry: 'r.example', repository: 'team/app' };
const context = (ms = 5_000) => ({ transport: new RegistryClient().transport, call: callWithin(ms) });
const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function failure(promise: Promise<unknown>): Promise<RegistryError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RegistryError);
  return error as RegistryError;
}

describe('cloud provider selection', () => {
  it('makes one provider per name, in order, without duplicates', () => {
    expect(CLOUD_PROVIDER_NAMES).toEqual(['ecr', 'gcp', 'acr']);
    expect(createCloudProviders(['acr', 'ecr', 'gcp', 'ecr'], { env: {} }).map((p) => p.name)).toEqual([
      'acr',
      'ecr',
      'gcp',
    ]);
    expect(createCloudProviders(['gcp']).map((p) => p.name)).toEqual(['gcp']);
    expect(isCloudProviderName('ecr')).toBe(true);
    expect(isCloudProviderName('docker-hub')).toBe(false);
  });

  it('asks a provider only for its own hosts, and only when no pull secret matches', async () => {
    const asked: string[] = [];
    const server = await startServer((request, response) => {
      const ok = request.headers.authorization === `Basic ${Buffer.from('AWS:pw').toString('base64')}`;
      sendJson(
        response,
        ok ? 200 : 401,
        {},
        ok
          ? { 'docker-content-digest': `sha256:${'d'.repeat(64)}` }
          : { 'www-authenticate': 'Basic realm="r"' },
      );
    });
    servers.push(server);
    const ecr = new EcrCredentials({
      registryOf: (host) =>
        host === server.host ? { kind: 'private', registryId: '1', region: 'r' } : undefined,
      loadSdk: async () => ({
        getPrivateToken: async (region, id) => {
          asked.push(`${region}/${id}`);
          return {
            authorizationToken: Buffer.from('AWS:pw').toString('base64'),
            expiresAt: new Date(Date.now() + 3_600_000),
          };
        },
        getPublicToken: async () => undefined,
      }),
    });
    const client = new RegistryClient({ insecureHosts: [server.host], credentialProviders: [ecr] });
    const ref = { registry: server.host, repository: 'team/app', tag: 'v1' };
    await client.resolveDigest(ref, callWithin(5_000));
    expect(asked).toEqual(['r/1']);
    const { Keychain } = await import('../src/keychain.js');
    const withSecret = client.withCredentials(
      new Keychain([
        {
          key: server.host,
          credential: { kind: 'basic', username: 'AWS', password: 'pw' },
          origin: 'Secret x',
        },
      ]),
    );
    await withSecret.resolveDigest(ref, callWithin(5_000));
    expect(asked).toEqual(['r/1']);
  });
});

describe('withinCall and the credential cache', () => {
  it('stops at the deadline, on cancellation, and refuses an already cancelled call', async () => {
    const never = () => new Promise<never>(() => undefined);
    expect((await failure(withinCall(context(30), repository, 'waiting', never))).problem).toBe(
      'the deadline passed while waiting',
    );
    const controller = new AbortController();
    const call = { signal: controller.signal, deadline: Date.now() + 5_000 };
    const pending = withinCall({ ...context(), call }, repository, 'waiting', never);
    controller.abort();
    expect((await failure(pending)).code).toBe('ABORTED');
    expect((await failure(withinCall({ ...context(), call }, repository, 'waiting', never))).code).toBe(
      'ABORTED',
    );
  });

  it('keeps at most maxEntries credentials and never keeps an expired one', async () => {
    let now = 0;
    const cache = new CredentialCache(() => now, 10, 2);
    let fetches = 0;
    const fetch = (expiresAt: number) => async () => {
      fetches++;
      return { credential: { kind: 'basic' as const, username: 'u', password: `${fetches}` }, expiresAt };
    };
    await cache.get('a', fetch(100));
    await cache.get('b', fetch(100));
    await cache.get('c', fetch(100)); // evicts a
    await cache.get('a', fetch(100));
    expect(fetches).toBe(4);
    await cache.get('x', fetch(5)); // expires within the margin: not kept
    await cache.get('x', fetch(5));
    expect(fetches).toBe(6);
    now = 95;
    await cache.get('c', fetch(200)); // c is past its renewal time
    expect(fetches).toBe(7);
  });

  it('names the provider and the first line of the cause', () => {
    expect(providerFailure('ECR', repository, 'X', 'plain text\nsecond line').problem).toBe(
      'ECR credentials: X failed: plain text',
    );
    const typed = providerFailure('GCP', repository, 'Y', new TypeError('bad'));
    expect(typed.problem).toBe('GCP credentials: Y failed: TypeError: bad');
    const passed = new RegistryError('TIMEOUT', repository, 'late');
    expect(providerFailure('ACR', repository, 'Z', passed)).toBe(passed);
  });
});

describe('ECR answers', () => {
  const sdk =
    (data: unknown, onLoad: () => void = () => undefined) =>
    async () => {
      onLoad();
      return { getPrivateToken: async () => data as never, getPublicToken: async () => data as never };
    };
  const registryOf = () => ({ kind: 'private' as const, registryId: '1', region: 'r' });

  it('refuses a host that is not ECR, an answer without a token, and retries a failed SDK load', async () => {
    expect((await failure(new EcrCredentials().credentialFor(repository, context()))).code).toBe(
      'INVALID_REQUEST',
    );
    const empty = new EcrCredentials({ registryOf, loadSdk: sdk(undefined) });
    expect((await failure(empty.credentialFor(repository, context()))).problem).toBe(
      'ECR credentials: GetAuthorizationToken returned no usable authorization token',
    );
    let loads = 0;
    const broken = new EcrCredentials({
      registryOf,
      loadSdk: async () => {
        loads++;
        throw new Error('Cannot find module @aws-sdk/client-ecr');
      },
    });
    expect((await failure(broken.credentialFor(repository, context()))).problem).toBe(
      'ECR credentials: GetAuthorizationToken failed: Cannot find module @aws-sdk/client-ecr',
    );
    await failure(broken.credentialFor(repository, context()));
    expect(loads).toBe(2);
  });

  it('keeps a token without an expiry for an hour', async () => {
    let loads = 0;
    const token = { authorizationToken: Buffer.from('AWS:pw').toString('base64') };
    const ecr = new EcrCredentials({ registryOf, loadSdk: sdk(token, () => loads++) });
    await ecr.credentialFor(repository, context());
    await ecr.credentialFor(repository, context());
    expect(loads).toBe(1);
  });

  it('gets public ECR credentials from the ECR Public API (real SDK, stand-in API)', async () => {
    const targets: string[] = [];
    const api = createServer(async (request, response) => {
      await readRequestBody(request);
      targets.push(String(request.headers['x-amz-target']));
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(
        JSON.stringify({
          authorizationData: {
            authorizationToken: Buffer.from('AWS:public-pw').toString('base64'),
            expiresAt: Date.now() / 1000 + 3600,
          },
        }),
      );
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const saved = { ...process.env };
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret' });
    try {
      const endpoint = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
      const ecr = new EcrCredentials({ endpoint, env: {} });
      const credential = await ecr.credentialFor(
        { registry: 'public.ecr.aws', repository: 'team/app' },
        context(),
      );
      expect(credential).toEqual({ kind: 'basic', username: 'AWS', password: 'public-pw' });
      expect(targets).toEqual(['SpencerFrontendService.GetAuthorizationToken']);
    } finally {
      process.env = saved;
      api.close();
    }
  });
});

describe('public ECR without an ECR Public identity', () => {
  it('goes on anonymously (public ECR serves everyone), and still passes timeouts on', async () => {
    const failing = new EcrCredentials({
      loadSdk: async () => ({
        getPrivateToken: async () => undefined,
        getPublicToken: async () => {
          throw new Error(
            'AccessDeniedException: not authorized to perform ecr-public:GetAuthorizationToken',
          );
        },
      }),
    });
    const publicEcr = { registry: 'public.ecr.aws', repository: 'team/app' };
    expect(await failing.credentialFor(publicEcr, context())).toBeUndefined();
    const hanging = new EcrCredentials({
      loadSdk: async () => ({
        getPrivateToken: async () => undefined,
        getPublicToken: () => new Promise(() => undefined),
      }),
    });
    expect((await failure(hanging.credentialFor(publicEcr, context(30)))).code).toBe('TIMEOUT');
  });
});

describe('GCP and ACR answers', () => {
  it('refuses an empty Google token and retries a failed load', async () => {
    const empty = new GcpCredentials({ loadSdk: async () => ({ accessToken: async () => null }) });
    expect((await failure(empty.credentialFor(repository, context()))).problem).toBe(
      'GCP credentials: getting an access token failed: no token was returned',
    );
    let loads = 0;
    const broken = new GcpCredentials({
      loadSdk: async () => {
        loads++;
        throw new Error('no module');
      },
    });
    await failure(broken.credentialFor(repository, context()));
    await failure(broken.credentialFor(repository, context()));
    expect(loads).toBe(2);
  });

  async function acrFront(answer: (body: URLSearchParams) => { status: number; text: string }) {
    const server = await startServer(async (request, response) => {
      const { status, text } = answer(new URLSearchParams(await readRequestBody(request)));
      response.writeHead(status, { 'content-type': 'application/json' }).end(text);
    });
    servers.push(server);
    return server;
  }
  const entra = {
    loadSdk: async () => ({ token: async () => ({ token: 'entra', expiresAt: Date.now() + 3_600_000 }) }),
  };

  it.each([
    ['invalid JSON', '{oops', 'ACR credentials: the token exchange answered invalid JSON'],
    [
      'no refresh token',
      '{"access_token":"x"}',
      'ACR credentials: the token exchange returned no refresh token',
    ],
    [
      'a refresh token with a newline',
      '{"refresh_token":"a\\nb"}',
      'ACR credentials: the token exchange returned no refresh token',
    ],
  ])('refuses an exchange answer with %s', async (_name, text, problem) => {
    const server = await acrFront(() => ({ status: 200, text }));
    const acr = new AcrCredentials({ ...entra, env: {} });
    const client = new RegistryClient({ insecureHosts: [server.host] });
    const error = await failure(
      acr.credentialFor(
        { registry: server.host, repository: 'team/app' },
        { transport: client.transport, call: callWithin(5_000) },
      ),
    );
    expect(error.problem).toBe(problem);
  });

  it('sends no tenant when none is known, and reports a failed Entra token', async () => {
    let form = new URLSearchParams();
    const server = await acrFront((body) => {
      form = body;
      return { status: 200, text: '{"refresh_token":"r"}' };
    });
    const client = new RegistryClient({ insecureHosts: [server.host] });
    const ctx = { transport: client.transport, call: callWithin(5_000) };
    await new AcrCredentials({ ...entra, env: {} }).credentialFor(
      { registry: server.host, repository: 'a' },
      ctx,
    );
    expect(form.has('tenant')).toBe(false);
    let loads = 0;
    const broken = new AcrCredentials({
      env: {},
      loadSdk: async () => {
        loads++;
        throw new Error('no identity');
      },
    });
    const error = await failure(broken.credentialFor({ registry: server.host, repository: 'a' }, ctx));
    expect(error.problem).toBe(
      'ACR credentials: getting a Microsoft Entra token (workload identity) failed: no identity',
    );
    await failure(broken.credentialFor({ registry: server.host, repository: 'a' }, ctx));
    expect(loads).toBe(2);
  });
});
