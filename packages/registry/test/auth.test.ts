import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthCache, Authenticator, pullScope } from '../src/auth.js';
import { RegistryError } from '../src/errors.js';
import { type HttpRequest, HttpTransport } from '../src/http.js';
import { Keychain } from '../src/keychain.js';
import type { RegistryCredential } from '../src/pull-secrets.js';
import {
  callWithin,
  JumpingClock,
  readRequestBody,
  sendJson,
  startServer,
  type TestServer,
} from './helpers/server.js';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

interface TokenServerOptions {
  /** What `/token` answers; the default issues `tok-<n>` for the requested scopes. */
  token?: (request: IncomingMessage, url: URL, body: string) => { status: number; body: unknown };
  /** What the registry answers to an authorized request; the default accepts every token it issued. */
  accept?: (authorization: string | undefined) => boolean;
  challenge?: (server: TestServer, url: URL) => string;
}

/** A registry that wants Bearer tokens from its own `/token` endpoint. */
async function bearerRegistry(options: TokenServerOptions = {}) {
  const issued = new Set<string>();
  let count = 0;
  const self: { server?: TestServer } = {};
  const server = await startServer(async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://x');
    if (url.pathname === '/token') {
      const body = await readRequestBody(request);
      const answer = options.token?.(request, url, body) ?? {
        status: 200,
        body: { token: `tok-${++count}`, expires_in: 300 },
      };
      const token = (answer.body as { token?: string } | null)?.token;
      if (token !== undefined) issued.add(`Bearer ${token}`);
      return sendJson(response, answer.status, answer.body);
    }
    const authorization = request.headers.authorization;
    const accepted =
      options.accept?.(authorization) ?? (authorization !== undefined && issued.has(authorization));
    if (accepted) return sendJson(response, 200, { ok: true });
    const challenge =
      options.challenge?.(self.server as TestServer, url) ??
      `Bearer realm="${self.server?.url}/token",service="registry.test",scope="repository:${url.pathname.split('/')[2]}:pull"`;
    sendJson(response, 401, { errors: [{ code: 'UNAUTHORIZED' }] }, { 'www-authenticate': challenge });
  });
  self.server = server;
  servers.push(server);
  const tokenRequests = () => server.requests.filter((request) => request.url.startsWith('/token'));
  const registryRequests = () => server.requests.filter((request) => request.url.startsWith('/v2/'));
  return { server, tokenRequests, registryRequests };
}

function setup(server: TestServer, credential?: RegistryCredential, clock = new JumpingClock()) {
  const transport = new HttpTransport({
    clock,
    insecureHosts: [server.host],
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
  });
  const cache = new AuthCache(clock);
  const keychain =
    credential === undefined
      ? undefined
      : new Keychain([{ key: server.host, credential, origin: 'Secret ns/pull' }]);
  return { transport, cache, clock, auth: new Authenticator(transport, cache, keychain) };
}

function manifestRequest(
  server: TestServer,
  repository = 'app',
): [HttpRequest, { registry: string; repository: string }] {
  const ref = { registry: server.host, repository };
  return [
    {
      method: 'GET',
      url: new URL(`${server.url}/v2/${repository}/manifests/v1`),
      maxBytes: 4096,
      context: ref,
    },
    ref,
  ];
}

async function failure(promise: Promise<unknown>): Promise<RegistryError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RegistryError);
  return error as RegistryError;
}

const basic: RegistryCredential = { kind: 'basic', username: 'robot', password: 'hunter2-secret' };

describe('Bearer token flow', () => {
  it('answers the challenge with an anonymous token request and retries with the token', async () => {
    const { server, tokenRequests, registryRequests } = await bearerRegistry();
    const { auth } = setup(server);
    const response = await auth.send(...manifestRequest(server), callWithin(5_000));
    expect(response.status).toBe(200);
    const [tokenRequest] = tokenRequests();
    const query = new URL(tokenRequest?.url ?? '', 'http://x').searchParams;
    expect(query.get('service')).toBe('registry.test');
    expect(query.getAll('scope')).toEqual(['repository:app:pull']);
    expect(tokenRequest?.headers.authorization).toBeUndefined();
    expect(registryRequests().map((request) => request.headers.authorization)).toEqual([
      undefined,
      'Bearer tok-1',
    ]);
  });

  it('sends Basic credentials to the token server only', async () => {
    const { server, tokenRequests, registryRequests } = await bearerRegistry();
    const { auth } = setup(server, basic);
    await auth.send(...manifestRequest(server), callWithin(5_000));
    const expected = `Basic ${Buffer.from('robot:hunter2-secret').toString('base64')}`;
    expect(tokenRequests()[0]?.headers.authorization).toBe(expected);
    expect(registryRequests().every((request) => request.headers.authorization !== expected)).toBe(true);
  });

  it('reuses a cached token for the same repository', async () => {
    const { server, tokenRequests, registryRequests } = await bearerRegistry();
    const { auth } = setup(server);
    await auth.send(...manifestRequest(server), callWithin(5_000));
    await auth.send(...manifestRequest(server), callWithin(5_000));
    expect(tokenRequests()).toHaveLength(1);
    expect(registryRequests()).toHaveLength(3);
    expect(registryRequests()[2]?.headers.authorization).toBe('Bearer tok-1');
  });

  it('asks for a new scope up front once it knows the challenge', async () => {
    const { server, tokenRequests, registryRequests } = await bearerRegistry();
    const { auth } = setup(server);
    await auth.send(...manifestRequest(server, 'app'), callWithin(5_000));
    await auth.send(...manifestRequest(server, 'other/app'), callWithin(5_000));
    expect(tokenRequests()).toHaveLength(2);
    expect(new URL(tokenRequests()[1]?.url ?? '', 'http://x').searchParams.getAll('scope')).toEqual([
      'repository:other/app:pull',
    ]);
    // No second 401: the token for other/app was fetched before its first request.
    expect(registryRequests().map((request) => request.headers.authorization)).toEqual([
      undefined,
      'Bearer tok-1',
      'Bearer tok-2',
    ]);
  });

  it('fetches a new token once the old one expires', async () => {
    const { server, tokenRequests } = await bearerRegistry({
      token: () => ({ status: 200, body: { access_token: `short-${Math.random()}`, expires_in: 30 } }),
      accept: (authorization) => authorization?.startsWith('Bearer short-') ?? false,
    });
    const { auth, clock } = setup(server);
    await auth.send(...manifestRequest(server), callWithin(5_000, clock));
    clock.advance(19_000);
    await auth.send(...manifestRequest(server), callWithin(5_000, clock));
    expect(tokenRequests()).toHaveLength(1);
    clock.advance(2_000);
    await auth.send(...manifestRequest(server), callWithin(5_000, clock));
    expect(tokenRequests()).toHaveLength(2);
  });

  it('keeps tokens of different credentials apart', async () => {
    const { server, tokenRequests, registryRequests } = await bearerRegistry();
    const first = setup(server, basic);
    await first.auth.send(...manifestRequest(server), callWithin(5_000));
    const anonymous = new Authenticator(first.transport, first.cache, undefined);
    await anonymous.send(...manifestRequest(server), callWithin(5_000));
    expect(tokenRequests()).toHaveLength(2);
    expect(tokenRequests()[1]?.headers.authorization).toBeUndefined();
    expect(registryRequests().at(-1)?.headers.authorization).toBe('Bearer tok-2');
  });

  it('replaces a cached token the registry no longer accepts, once', async () => {
    let revoked = '';
    const { server, tokenRequests } = await bearerRegistry({
      accept: (authorization) =>
        authorization?.startsWith('Bearer tok-') === true && authorization !== revoked,
    });
    const { auth } = setup(server);
    await auth.send(...manifestRequest(server), callWithin(5_000));
    revoked = 'Bearer tok-1';
    const response = await auth.send(...manifestRequest(server), callWithin(5_000));
    expect(response.status).toBe(200);
    expect(tokenRequests()).toHaveLength(2);
  });

  it('ends a 401 loop after one retry with AUTH_LOOP', async () => {
    const { server, tokenRequests, registryRequests } = await bearerRegistry({ accept: () => false });
    const { auth } = setup(server, basic);
    const started = Date.now();
    const error = await failure(auth.send(...manifestRequest(server), callWithin(5_000)));
    expect(error.code).toBe('AUTH_LOOP');
    expect(error.status).toBe(401);
    expect(error.message).toContain(`registry ${server.host} repository app`);
    expect(error.message).toContain('repository:app:pull');
    expect(error.message).not.toContain('hunter2');
    expect(error.message).not.toContain('tok-');
    expect(registryRequests()).toHaveLength(2);
    expect(tokenRequests()).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('reports a fresh token refused for insufficient_scope as UNAUTHORIZED, not a loop', async () => {
    const { server, tokenRequests, registryRequests } = await bearerRegistry({
      accept: () => false,
      challenge: (self, url) =>
        url.pathname.includes('/manifests/') && registryRequests().length > 1
          ? `Bearer realm="${self.url}/token",service="s",scope="repository:app:pull",error="insufficient_scope"`
          : `Bearer realm="${self.url}/token",service="s"`,
    });
    const { auth } = setup(server);
    const error = await failure(auth.send(...manifestRequest(server), callWithin(5_000)));
    expect(error.code).toBe('UNAUTHORIZED');
    expect(error.message).toContain('does not grant it (insufficient_scope)');
    expect(tokenRequests()).toHaveLength(1);
  });

  it('also asks for the scope the challenge names', async () => {
    const { server, tokenRequests } = await bearerRegistry({
      challenge: (self) => `Bearer realm="${self.url}/token",scope="repository:app:pull,push"`,
    });
    const { auth } = setup(server);
    await auth.send(...manifestRequest(server), callWithin(5_000));
    const query = new URL(tokenRequests()[0]?.url ?? '', 'http://x').searchParams;
    expect(query.getAll('scope')).toEqual(['repository:app:pull', 'repository:app:pull,push']);
    expect(query.has('service')).toBe(false);
  });

  it('exchanges an identity token with an OAuth2 refresh_token POST', async () => {
    let form = new URLSearchParams();
    const { server, tokenRequests } = await bearerRegistry({
      token: (_request, _url, body) => {
        form = new URLSearchParams(body);
        return { status: 200, body: { access_token: 'oauth-token' } };
      },
      accept: (authorization) => authorization === 'Bearer oauth-token',
    });
    const { auth } = setup(server, { kind: 'identity-token', username: undefined, token: 'refresh-me' });
    await auth.send(...manifestRequest(server), callWithin(5_000));
    expect(tokenRequests()[0]?.method).toBe('POST');
    expect(tokenRequests()[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(form)).toEqual({
      service: 'registry.test',
      scope: 'repository:app:pull',
      grant_type: 'refresh_token',
      client_id: 'signet',
      refresh_token: 'refresh-me',
    });
  });

  it('does not cache a token that expires within the safety margin', async () => {
    const { server, tokenRequests } = await bearerRegistry({
      token: () => ({ status: 200, body: { token: 'brief', expires_in: 5 } }),
      accept: (authorization) => authorization === 'Bearer brief',
    });
    const { auth } = setup(server);
    await auth.send(...manifestRequest(server), callWithin(5_000));
    await auth.send(...manifestRequest(server), callWithin(5_000));
    expect(tokenRequests()).toHaveLength(2);
  });
});

describe('token server failures', () => {
  const cases: [string, { status: number; body: unknown }, string, string][] = [
    [
      'refused credentials',
      { status: 401, body: { details: 'no' } },
      'UNAUTHORIZED',
      'refused the credentials (401)',
    ],
    ['forbidden', { status: 403, body: {} }, 'UNAUTHORIZED', 'refused the credentials (403)'],
    ['an unexpected status', { status: 404, body: {} }, 'UNEXPECTED_STATUS', 'answered 404'],
    ['no token', { status: 200, body: { expires_in: 60 } }, 'MALFORMED', 'without a usable token'],
    [
      'a token with a newline',
      { status: 200, body: { token: 'a\r\nX-Evil: 1' } },
      'MALFORMED',
      'without a usable token',
    ],
    [
      'an empty token',
      { status: 200, body: { token: '', access_token: '' } },
      'MALFORMED',
      'without a usable token',
    ],
    ['a JSON array', { status: 200, body: ['tok'] }, 'MALFORMED', 'without a usable token'],
    ['JSON null', { status: 200, body: null }, 'MALFORMED', 'without a usable token'],
  ];
  it.each(cases)('reports %s', async (_name, answer, code, message) => {
    const { server } = await bearerRegistry({ token: () => answer });
    const { auth } = setup(server, basic);
    const error = await failure(auth.send(...manifestRequest(server), callWithin(5_000)));
    expect(error.code).toBe(code);
    expect(error.message).toContain(message);
    expect(error.message).toContain(`token server ${server.url}/token`);
    expect(error.message).not.toContain('hunter2');
  });

  it('reports invalid JSON without quoting the body', async () => {
    const server = await startServer((request, response) => {
      if (request.url?.startsWith('/token')) return void response.end('{"token": "sekrit-value", oops');
      response
        .writeHead(401, { 'www-authenticate': `Bearer realm="http://${request.headers.host}/token"` })
        .end();
    });
    servers.push(server);
    const { auth } = setup(server);
    const error = await failure(auth.send(...manifestRequest(server), callWithin(5_000)));
    expect(error.code).toBe('MALFORMED');
    expect(error.message).toContain('invalid JSON');
    expect(error.message).not.toContain('sekrit');
    expect(error.cause).toBeUndefined();
  });

  it('refuses a realm over plain HTTP to a host not listed as insecure', async () => {
    const { server, tokenRequests } = await bearerRegistry({
      challenge: () => 'Bearer realm="http://auth.example.invalid/token",service="x"',
    });
    const { auth } = setup(server, basic);
    const error = await failure(auth.send(...manifestRequest(server), callWithin(5_000)));
    expect(error.code).toBe('INSECURE_REFUSED');
    expect(tokenRequests()).toHaveLength(0);
  });

  it('refuses a realm on a link-local address (cloud metadata)', async () => {
    const { server, tokenRequests } = await bearerRegistry({
      challenge: () => 'Bearer realm="https://169.254.169.254/latest/meta-data",service="x"',
    });
    const { auth } = setup(server, basic);
    const error = await failure(auth.send(...manifestRequest(server), callWithin(5_000)));
    expect(error.code).toBe('INSECURE_REFUSED');
    expect(error.message).toContain('link-local');
    expect(tokenRequests()).toHaveLength(0);
  });

  it.each([
    ['not a URL', 'Bearer realm="::::",service="x"'],
    ['user info in the realm', 'Bearer realm="https://user:pw@auth.example/token"'],
  ])('refuses a realm that is %s', async (_name, challenge) => {
    const { server } = await bearerRegistry({ challenge: () => challenge });
    const { auth } = setup(server);
    const error = await failure(auth.send(...manifestRequest(server), callWithin(5_000)));
    expect(error.code).toBe('MALFORMED');
    expect(error.message).toContain('no valid realm URL');
    expect(error.message).not.toContain('pw');
  });
});

describe('challenges and tokens scoped to what they were for (issue 9, item 5)', () => {
  /** One host: `private/*` wants tokens from realm `/token-<n>` (the active one), the rest is anonymous. */
  async function mixedRegistry() {
    const state = { realm: 'token-1', broken: new Set<string>(), hang: false };
    let issued = 0;
    const server = await startServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://x');
      const realm = url.pathname.slice(1);
      if (realm.startsWith('token-')) {
        if (state.hang) return;
        if (state.broken.has(realm)) return sendJson(response, 400, { details: 'realm misconfigured' });
        return sendJson(response, 200, { token: `${realm}-tok-${++issued}`, expires_in: 300 });
      }
      if (!url.pathname.startsWith('/v2/private/')) return sendJson(response, 200, { open: true });
      if (request.headers.authorization?.startsWith(`Bearer ${state.realm}-tok-`)) {
        return sendJson(response, 200, { private: true });
      }
      const host = request.headers.host ?? '';
      sendJson(
        response,
        401,
        {},
        { 'www-authenticate': `Bearer realm="http://${host}/${state.realm}",service="s"` },
      );
    });
    servers.push(server);
    const tokenRequests = () => server.requests.filter((seen) => seen.url.startsWith('/token-'));
    return { server, state, tokenRequests };
  }

  it('does not apply a challenge whose token realm failed to the other repositories of the host', async () => {
    const { server, state, tokenRequests } = await mixedRegistry();
    state.broken.add('token-1');
    const { auth } = setup(server);
    const denied = await failure(auth.send(...manifestRequest(server, 'private/app'), callWithin(5_000)));
    expect(denied.code).toBe('UNEXPECTED_STATUS');
    const open = await auth.send(...manifestRequest(server, 'public/app'), callWithin(5_000));
    expect(open.status).toBe(200);
    expect(tokenRequests()).toHaveLength(1);
  });

  it("drops a remembered challenge when its realm stops working, and follows the registry's new one", async () => {
    const { server, state, tokenRequests } = await mixedRegistry();
    const { auth } = setup(server);
    expect((await auth.send(...manifestRequest(server, 'private/a'), callWithin(5_000))).status).toBe(200);
    // The registry moves to another token realm; the old one is now refused.
    state.broken.add('token-1');
    state.realm = 'token-2';
    expect((await auth.send(...manifestRequest(server, 'private/b'), callWithin(5_000))).status).toBe(200);
    expect((await auth.send(...manifestRequest(server, 'private/c'), callWithin(5_000))).status).toBe(200);
    expect(tokenRequests().map((seen) => seen.url.split('?')[0])).toEqual([
      '/token-1', // private/a
      '/token-1', // private/b, up front with the remembered challenge: refused, so forgotten
      '/token-2', // private/b, answering the registry's new challenge
      '/token-2', // private/c, up front with the new challenge
    ]);
  });

  it('gives up when the remembered realm uses up the deadline', async () => {
    const { server, state } = await mixedRegistry();
    const { auth } = setup(server);
    await auth.send(...manifestRequest(server, 'private/a'), callWithin(5_000));
    state.hang = true;
    const late = await failure(auth.send(...manifestRequest(server, 'private/b'), callWithin(300)));
    expect(late.code).toBe('TIMEOUT');
  });

  it('tries a failing realm once per request, not twice, when the registry still names it', async () => {
    const { server, state, tokenRequests } = await mixedRegistry();
    const { auth } = setup(server);
    await auth.send(...manifestRequest(server, 'private/a'), callWithin(5_000));
    state.broken.add('token-1');
    const denied = await failure(auth.send(...manifestRequest(server, 'private/b'), callWithin(5_000)));
    expect(denied.code).toBe('UNEXPECTED_STATUS');
    expect(tokenRequests()).toHaveLength(2);
    // Nothing of the failure is kept: once the realm works again, so does the next request.
    state.broken.delete('token-1');
    expect((await auth.send(...manifestRequest(server, 'private/b'), callWithin(5_000))).status).toBe(200);
  });
});

describe('Basic and missing challenges', () => {
  async function basicRegistry(valid: string) {
    const server = await startServer((request, response) => {
      if (request.headers.authorization === valid) return sendJson(response, 200, {});
      sendJson(response, 401, {}, { 'www-authenticate': 'Basic realm="registry"' });
    });
    servers.push(server);
    return server;
  }

  it('sends Basic credentials when the registry asks for them, and up front afterwards', async () => {
    const valid = `Basic ${Buffer.from('robot:hunter2-secret').toString('base64')}`;
    const server = await basicRegistry(valid);
    const { auth } = setup(server, basic);
    await auth.send(...manifestRequest(server), callWithin(5_000));
    await auth.send(...manifestRequest(server), callWithin(5_000));
    expect(server.requests.map((request) => request.headers.authorization)).toEqual([
      undefined,
      valid,
      valid,
    ]);
  });

  it('reports refused Basic credentials after one retry', async () => {
    const server = await basicRegistry('Basic nope');
    const { auth } = setup(server, basic);
    const error = await failure(auth.send(...manifestRequest(server), callWithin(5_000)));
    expect(error.code).toBe('UNAUTHORIZED');
    expect(error.message).toContain('refused the configured credentials');
    expect(error.message).not.toContain('hunter2');
    expect(server.requests).toHaveLength(2);
    // A challenge whose answer was refused is not remembered: the next request starts afresh.
    const again = await failure(auth.send(...manifestRequest(server), callWithin(5_000)));
    expect(again.code).toBe('UNAUTHORIZED');
    expect(server.requests).toHaveLength(4);
  });

  it('refuses at once when credentials that worked are refused later', async () => {
    let valid = `Basic ${Buffer.from('robot:hunter2-secret').toString('base64')}`;
    const server = await startServer((request, response) => {
      if (request.headers.authorization === valid) return sendJson(response, 200, {});
      sendJson(response, 401, {}, { 'www-authenticate': 'Basic realm="registry"' });
    });
    servers.push(server);
    const { auth } = setup(server, basic);
    await auth.send(...manifestRequest(server), callWithin(5_000));
    valid = 'Basic rotated';
    const error = await failure(auth.send(...manifestRequest(server), callWithin(5_000)));
    expect(error.message).toContain('refused the configured credentials');
    expect(server.requests).toHaveLength(3);
  });

  it('says so when a Basic registry gets no credentials', async () => {
    const server = await basicRegistry('Basic x');
    const { auth } = setup(server);
    const error = await failure(auth.send(...manifestRequest(server), callWithin(5_000)));
    expect(error.code).toBe('UNAUTHORIZED');
    expect(error.message).toContain('no pull secret matches');
  });

  it('does not send an identity token as Basic', async () => {
    const server = await basicRegistry('Basic x');
    const { auth } = setup(server, { kind: 'identity-token', username: 'u', token: 't' });
    const error = await failure(auth.send(...manifestRequest(server), callWithin(5_000)));
    expect(error.code).toBe('UNAUTHORIZED');
    expect(server.requests.every((request) => request.headers.authorization === undefined)).toBe(true);
  });

  it.each([
    ['no header', undefined],
    ['an unknown scheme', 'Negotiate abc'],
    ['Bearer without realm', 'Bearer service="x"'],
  ])('reports a 401 with %s', async (_name, header) => {
    const server = await startServer((_request, response) => {
      response.writeHead(401, header === undefined ? {} : { 'www-authenticate': header }).end();
    });
    servers.push(server);
    const { auth } = setup(server);
    const error = await failure(auth.send(...manifestRequest(server), callWithin(5_000)));
    expect(error.code).toBe('UNAUTHORIZED');
    expect(error.message).toContain('without a Basic or Bearer challenge');
  });

  it('prefers Bearer when both are offered', async () => {
    const { server, tokenRequests } = await bearerRegistry({
      challenge: (self) => `Basic realm="r", Bearer realm="${self.url}/token",service="s"`,
    });
    const { auth } = setup(server, basic);
    await auth.send(...manifestRequest(server), callWithin(5_000));
    expect(tokenRequests()).toHaveLength(1);
  });
});

describe('AuthCache', () => {
  it('bounds the number of tokens', async () => {
    const { server, tokenRequests } = await bearerRegistry();
    const clock = new JumpingClock();
    const transport = new HttpTransport({ clock, insecureHosts: [server.host] });
    const cache = new AuthCache(clock, { maxTokens: 1, maxRegistries: 1, maxTokenTtlMs: 60_000 });
    const auth = new Authenticator(transport, cache, undefined);
    await auth.send(...manifestRequest(server, 'a'), callWithin(5_000));
    await auth.send(...manifestRequest(server, 'b'), callWithin(5_000));
    await auth.send(...manifestRequest(server, 'a'), callWithin(5_000));
    expect(cache.tokens.size).toBe(1);
    expect(tokenRequests()).toHaveLength(3);
  });

  it('caps token lifetime at maxTokenTtlMs', async () => {
    const { server, tokenRequests } = await bearerRegistry();
    const clock = new JumpingClock();
    const transport = new HttpTransport({ clock, insecureHosts: [server.host] });
    const auth = new Authenticator(transport, new AuthCache(clock, { maxTokenTtlMs: 1_000 }), undefined);
    await auth.send(...manifestRequest(server), callWithin(5_000, clock));
    clock.advance(1_001);
    await auth.send(...manifestRequest(server), callWithin(5_000, clock));
    expect(tokenRequests()).toHaveLength(2);
  });

  it('names the pull scope', () => {
    expect(pullScope({ registry: 'r', repository: 'team/app' })).toBe('repository:team/app:pull');
  });
});
