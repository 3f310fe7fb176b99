import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthCache } from '../src/auth.js';
import { RegistryClient, type RegistryClientOptions } from '../src/client.js';
import { RegistryError } from '../src/errors.js';
import { Keychain } from '../src/keychain.js';
import { dispatchFetch } from '../src/net/request.js';
import type { RepositoryRef } from '../src/references.js';
import { MemoryRegistry, OCI_EMPTY, OCI_INDEX, OCI_MANIFEST, sha256 } from './helpers/memory-registry.js';
import { callWithin, type Handler, sendJson, startServer, type TestServer } from './helpers/server.js';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(handler: Handler): Promise<TestServer> {
  const server = await startServer(handler);
  servers.push(server);
  return server;
}

function clientFor(server: TestServer, options: RegistryClientOptions = {}): RegistryClient {
  return new RegistryClient({
    insecureHosts: [server.host],
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    ...options,
  });
}

async function failure(promise: Promise<unknown>): Promise<RegistryError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RegistryError);
  return error as RegistryError;
}

const BUNDLE = 'application/vnd.dev.sigstore.bundle.v0.3+json';

async function memoryRegistry() {
  const memory = new MemoryRegistry();
  const server = await serve(memory.handler);
  const repo: RepositoryRef = { registry: server.host, repository: 'team/app' };
  return { memory, server, repo, client: clientFor(server) };
}

describe('resolveDigest', () => {
  it('uses HEAD and the Docker-Content-Digest header', async () => {
    const { memory, server, repo, client } = await memoryRegistry();
    const image = memory.pushImage('team/app', 'v1');
    expect(await client.resolveDigest({ ...repo, tag: 'v1' }, callWithin(5_000))).toBe(image.digest);
    expect(server.requests.map((request) => request.method)).toEqual(['HEAD']);
    expect(server.requests[0]?.headers.accept).toBe(
      [
        'application/vnd.oci.image.manifest.v1+json',
        'application/vnd.oci.image.index.v1+json',
        'application/vnd.docker.distribution.manifest.v2+json',
        'application/vnd.docker.distribution.manifest.list.v2+json',
      ].join(', '),
    );
  });

  it.each([
    ['no digest header', undefined],
    ['a malformed digest header', 'sha256:nothex'],
  ])('falls back to GET and hashes the body when HEAD has %s', async (_name, header) => {
    const body = JSON.stringify({ schemaVersion: 2, mediaType: OCI_INDEX, manifests: [] });
    const server = await serve((request, response) => {
      const headers: Record<string, string> = { 'content-type': OCI_INDEX };
      if (request.method === 'HEAD' && header !== undefined) headers['docker-content-digest'] = header;
      response.writeHead(200, headers).end(request.method === 'HEAD' ? undefined : body);
    });
    const digest = await clientFor(server).resolveDigest(
      { registry: server.host, repository: 'a', tag: 'latest' },
      callWithin(5_000),
    );
    expect(digest).toBe(sha256(body));
    expect(server.requests.map((request) => request.method)).toEqual(['HEAD', 'GET']);
  });

  it('falls back to GET when HEAD is not allowed', async () => {
    const { memory, server, repo } = await memoryRegistry();
    const image = memory.pushImage('team/app', 'v1');
    const client = new RegistryClient({
      insecureHosts: [server.host],
      fetch: (url, init) =>
        init.method === 'HEAD'
          ? Promise.resolve(new Response(null, { status: 405 }))
          : dispatchFetch(url, init),
    });
    expect(await client.resolveDigest({ ...repo, tag: 'v1' }, callWithin(5_000))).toBe(image.digest);
  });

  it('reports an unknown tag as NOT_FOUND without a GET', async () => {
    const { server, repo, client } = await memoryRegistry();
    const error = await failure(client.resolveDigest({ ...repo, tag: 'missing' }, callWithin(5_000)));
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toBe(`registry ${server.host} repository team/app: tag missing not found`);
    expect(server.requests).toHaveLength(1);
  });

  it('refuses something that is not a tag', async () => {
    const { repo, client } = await memoryRegistry();
    const error = await failure(client.resolveDigest({ ...repo, tag: '../../etc' }, callWithin(5_000)));
    expect(error.code).toBe('INVALID_REQUEST');
  });
});

describe('getManifest', () => {
  it('returns a manifest by digest with its exact bytes', async () => {
    const { memory, repo, client } = await memoryRegistry();
    const image = memory.pushImage('team/app', 'v1');
    const fetched = await client.getManifest(repo, image.digest, callWithin(5_000));
    expect(fetched.digest).toBe(image.digest);
    expect(fetched.mediaType).toBe(OCI_MANIFEST);
    expect(sha256(fetched.bytes)).toBe(image.digest);
    expect(fetched.manifest.kind).toBe('manifest');
  });

  it('returns the computed digest when fetching by tag', async () => {
    const { memory, repo, client } = await memoryRegistry();
    const image = memory.pushImage('team/app', 'v1');
    expect((await client.getManifest(repo, 'v1', callWithin(5_000))).digest).toBe(image.digest);
  });

  it('refuses a manifest whose bytes do not match the digest asked for', async () => {
    const honest = JSON.stringify({ schemaVersion: 2, mediaType: OCI_INDEX, manifests: [] });
    const forged = JSON.stringify({ schemaVersion: 2, mediaType: OCI_INDEX, manifests: [], evil: true });
    const server = await serve((_request, response) => {
      response
        .writeHead(200, { 'content-type': OCI_INDEX, 'docker-content-digest': sha256(honest) })
        .end(forged);
    });
    const error = await failure(
      clientFor(server).getManifest(
        { registry: server.host, repository: 'a' },
        sha256(honest),
        callWithin(5_000),
      ),
    );
    expect(error.code).toBe('DIGEST_MISMATCH');
    expect(error.message).toBe(
      `registry ${server.host} repository a: manifest ${sha256(honest)} hashes to ${sha256(forged)}, not ${sha256(honest)}`,
    );
  });

  it('refuses a manifest by tag that does not match its announced digest', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': OCI_INDEX, 'docker-content-digest': sha256('other') });
      response.end(JSON.stringify({ schemaVersion: 2, mediaType: OCI_INDEX, manifests: [] }));
    });
    const error = await failure(
      clientFor(server).getManifest({ registry: server.host, repository: 'a' }, 'v1', callWithin(5_000)),
    );
    expect(error.code).toBe('DIGEST_MISMATCH');
  });

  it('stops reading a 50 MB manifest at the manifest cap', async () => {
    let written = Promise.resolve(0);
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': OCI_MANIFEST });
      written = new Promise((resolve) => {
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        let sent = 0;
        response.on('close', () => resolve(sent));
        const pump = () => {
          while (sent < 50 * 1024 * 1024 && !response.destroyed) {
            sent += chunk.length;
            if (!response.write(chunk)) return void response.once('drain', pump);
          }
          response.end();
        };
        pump();
      });
    });
    const started = Date.now();
    const error = await failure(
      clientFor(server).getManifest({ registry: server.host, repository: 'a' }, 'big', callWithin(10_000)),
    );
    expect(error.code).toBe('TOO_LARGE');
    expect(error.message).toContain(`longer than ${4 * 1024 * 1024} bytes`);
    expect(await written).toBeLessThan(25 * 1024 * 1024);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('honours a configured manifest cap', async () => {
    const { memory, repo, server } = await memoryRegistry();
    const image = memory.pushImage('team/app', 'v1');
    const client = clientFor(server, { limits: { manifestMaxBytes: 10 } });
    expect((await failure(client.getManifest(repo, image.digest, callWithin(5_000)))).code).toBe('TOO_LARGE');
  });

  it.each([
    [
      404,
      { errors: [{ code: 'MANIFEST_UNKNOWN' }, { code: 'lower-case is ignored' }] },
      'NOT_FOUND',
      'manifest v1 not found (MANIFEST_UNKNOWN)',
    ],
    [403, { errors: [{ code: 'DENIED' }] }, 'UNAUTHORIZED', 'access to manifest v1 denied (DENIED)'],
    [400, 'not json', 'UNEXPECTED_STATUS', 'manifest v1: unexpected status 400'],
    [418, { errors: 'nope' }, 'UNEXPECTED_STATUS', 'manifest v1: unexpected status 418'],
    [500, {}, 'SERVER_ERROR', 'answered 500'],
  ])('maps status %i to %s', async (status, body, code, message) => {
    const server = await serve((_request, response) => sendJson(response, status, body));
    const error = await failure(
      clientFor(server).getManifest({ registry: server.host, repository: 'a' }, 'v1', callWithin(5_000)),
    );
    expect(error.code).toBe(code);
    expect(error.status).toBe(status);
    expect(error.message).toContain(message);
  });

  it('refuses a reference that is neither a tag nor a digest', async () => {
    const { repo, client, server } = await memoryRegistry();
    expect((await failure(client.getManifest(repo, 'sha256:abc', callWithin(5_000)))).code).toBe(
      'INVALID_REQUEST',
    );
    expect(server.requests).toHaveLength(0);
  });

  it.each([
    ['a path-traversing repository', { registry: '127.0.0.1:1', repository: '../../v2/x' }],
    ['an uppercase repository', { registry: '127.0.0.1:1', repository: 'Team/App' }],
    ['a registry with a path', { registry: 'evil.example/x?', repository: 'a' }],
    ['an over-long repository', { registry: 'r.example', repository: 'a'.repeat(256) }],
  ])('refuses %s', async (_name, repo) => {
    const client = new RegistryClient();
    const error = await failure(client.getManifest(repo, 'v1', callWithin(5_000)));
    expect(error.code).toBe('INVALID_REQUEST');
  });
});

describe('endpoints', () => {
  function recordingClient(options: RegistryClientOptions = {}) {
    const urls: string[] = [];
    const client = new RegistryClient({
      ...options,
      fetch: async (url) => {
        urls.push(url.href);
        return new Response(JSON.stringify({ errors: [{ code: 'MANIFEST_UNKNOWN' }] }), { status: 404 });
      },
    });
    return { client, urls };
  }

  it('speaks https to registries not listed as insecure, and Docker Hub at registry-1.docker.io', async () => {
    const { client, urls } = recordingClient();
    await failure(
      client.getManifest(
        { registry: 'index.docker.io', repository: 'library/alpine' },
        'v1',
        callWithin(5_000),
      ),
    );
    await failure(
      client.getManifest({ registry: 'docker.io', repository: 'library/alpine' }, 'v1', callWithin(5_000)),
    );
    await failure(
      client.getManifest({ registry: 'ghcr.io', repository: 'org/app' }, 'v1', callWithin(5_000)),
    );
    await failure(client.getManifest({ registry: '[::1]:5000', repository: 'app' }, 'v1', callWithin(5_000)));
    expect(urls).toEqual([
      'https://registry-1.docker.io/v2/library/alpine/manifests/v1',
      'https://registry-1.docker.io/v2/library/alpine/manifests/v1',
      'https://ghcr.io/v2/org/app/manifests/v1',
      'https://[::1]:5000/v2/app/manifests/v1',
    ]);
  });

  it('speaks plain HTTP to a registry listed as insecure', async () => {
    const { client, urls } = recordingClient({ insecureHosts: ['registry.local:5000'] });
    await failure(
      client.getBlob({ registry: 'registry.local:5000', repository: 'a' }, sha256('x'), callWithin(5_000)),
    );
    expect(urls).toEqual([`http://registry.local:5000/v2/a/blobs/${sha256('x')}`]);
  });

  it('computes deadlines on its clock', () => {
    const client = new RegistryClient({ clock: { now: () => 1_000, sleep: async () => {} } });
    expect(client.deadlineIn(500)).toBe(1_500);
  });

  it('shares transport and token cache with a client for other credentials', () => {
    const cache = new AuthCache({ now: () => 0, sleep: async () => {} });
    const client = new RegistryClient({ authCache: cache, credentials: new Keychain([]) });
    const other = client.withCredentials(new Keychain([]));
    expect(other.transport).toBe(client.transport);
    expect(other.authCache).toBe(cache);
    expect(client.withCredentials(undefined).limits).toEqual(client.limits);
  });
});

describe('getBlob', () => {
  it('returns a blob verified by its digest', async () => {
    const { memory, repo, client } = await memoryRegistry();
    const blob = memory.pushBlob('team/app', 'payload');
    expect(Buffer.from(await client.getBlob(repo, blob.digest, callWithin(5_000))).toString()).toBe(
      'payload',
    );
  });

  it('follows a redirect to storage and verifies what it got there', async () => {
    const storage = await serve((request, response) => {
      response.end(request.url === '/good' ? 'payload' : 'tampered');
    });
    const registry = await serve((request, response) => {
      const target = request.url?.endsWith(sha256('payload')) ? '/good' : '/bad';
      response.writeHead(307, { location: `${storage.url}${target}` }).end();
    });
    const client = new RegistryClient({ insecureHosts: [registry.host, storage.host] });
    const repo = { registry: registry.host, repository: 'a' };
    expect(Buffer.from(await client.getBlob(repo, sha256('payload'), callWithin(5_000))).toString()).toBe(
      'payload',
    );
    const error = await failure(client.getBlob(repo, sha256('expected'), callWithin(5_000)));
    expect(error.code).toBe('DIGEST_MISMATCH');
    expect(error.message).toContain(`blob ${sha256('expected')} hashes to ${sha256('tampered')}`);
  });

  it('applies the blob cap, or the one given', async () => {
    const { memory, repo, server } = await memoryRegistry();
    const blob = memory.pushBlob('team/app', 'x'.repeat(100));
    const client = clientFor(server, { limits: { blobMaxBytes: 50 } });
    expect((await failure(client.getBlob(repo, blob.digest, callWithin(5_000)))).code).toBe('TOO_LARGE');
    expect(await client.getBlob(repo, blob.digest, callWithin(5_000), { maxBytes: 100 })).toHaveLength(100);
  });

  it('reports a missing blob and refuses a malformed digest', async () => {
    const { repo, client } = await memoryRegistry();
    const missing = await failure(client.getBlob(repo, sha256('nothing'), callWithin(5_000)));
    expect(missing.code).toBe('NOT_FOUND');
    expect(missing.message).toContain('(BLOB_UNKNOWN)');
    expect((await failure(client.getBlob(repo, 'md5:abc', callWithin(5_000)))).code).toBe('INVALID_REQUEST');
  });
});

function referrer(memory: MemoryRegistry, subject: { digest: string; size: number }, artifactType = BUNDLE) {
  const layer = memory.pushBlob('team/app', `bundle ${Math.random()}`, BUNDLE);
  return memory.pushManifest('team/app', {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    artifactType,
    config: { mediaType: OCI_EMPTY, digest: sha256('{}'), size: 2 },
    layers: [layer],
    subject: { mediaType: OCI_MANIFEST, ...subject },
  });
}

describe('listReferrers through the referrers API', () => {
  it('lists referrers and filters on artifactType, also when the registry ignores the filter', async () => {
    const { memory, server, repo, client } = await memoryRegistry();
    const image = memory.pushImage('team/app', 'v1');
    const bundle = referrer(memory, image);
    referrer(memory, image, 'application/vnd.example.sbom');
    const all = await client.listReferrers(repo, image.digest, callWithin(5_000));
    expect(all.via).toBe('referrers-api');
    expect(all.truncated).toBe(false);
    expect(all.descriptors).toHaveLength(2);
    const filtered = await client.listReferrers(repo, image.digest, callWithin(5_000), {
      artifactType: BUNDLE,
    });
    expect(filtered.descriptors.map((descriptor) => descriptor.digest)).toEqual([bundle.digest]);
    expect(server.requests.at(-1)?.url).toBe(
      `/v2/team/app/referrers/${image.digest}?artifactType=${encodeURIComponent(BUNDLE)}`,
    );
  });

  /** A registry whose referrers come in pages of one descriptor, linked with `Link: rel="next"`. */
  async function pagedRegistry(
    pages: number,
    link: (server: TestServer, page: number) => string | undefined,
  ) {
    const self: { server?: TestServer } = {};
    const server = await serve((request: IncomingMessage, response: ServerResponse) => {
      const page = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
      const next = page < pages ? link(self.server as TestServer, page + 1) : undefined;
      const body = {
        schemaVersion: 2,
        mediaType: OCI_INDEX,
        manifests: [
          { mediaType: OCI_MANIFEST, digest: sha256(`page ${page}`), size: page, artifactType: BUNDLE },
        ],
      };
      sendJson(response, 200, body, {
        'content-type': OCI_INDEX,
        ...(next === undefined ? {} : { link: next }),
      });
    });
    self.server = server;
    return { server, client: clientFor(server), repo: { registry: server.host, repository: 'team/app' } };
  }
  const subject = sha256('image');

  it('follows Link pagination over three pages', async () => {
    const { server, client, repo } = await pagedRegistry(3, (self, page) =>
      page === 2
        ? `</v2/team/app/referrers/${subject}?page=2>; rel="next"`
        : `<${self.url}/v2/team/app/referrers/${subject}?page=3>; rel=next, <https://example.com/docs>; rel="help"`,
    );
    const referrers = await client.listReferrers(repo, subject, callWithin(5_000));
    expect(referrers.descriptors.map((descriptor) => descriptor.size)).toEqual([1, 2, 3]);
    expect(referrers.truncated).toBe(false);
    expect(server.requests.map((request) => request.url)).toEqual([
      `/v2/team/app/referrers/${subject}`,
      `/v2/team/app/referrers/${subject}?page=2`,
      `/v2/team/app/referrers/${subject}?page=3`,
    ]);
  });

  it('stops after the page limit and says the list is truncated', async () => {
    const { server, repo } = await pagedRegistry(
      100,
      (_self, page) => `</v2/team/app/referrers/x?page=${page}>; rel="next"`,
    );
    const client = clientFor(server, { limits: { referrersMaxPages: 2 } });
    const referrers = await client.listReferrers(repo, subject, callWithin(5_000));
    expect(referrers.descriptors).toHaveLength(2);
    expect(referrers.truncated).toBe(true);
    expect(server.requests).toHaveLength(2);
  });

  it('stops after the descriptor limit', async () => {
    const { server, repo } = await pagedRegistry(
      100,
      (_self, page) => `</v2/team/app/referrers/x?page=${page}>; rel="next"`,
    );
    const client = clientFor(server, { limits: { referrersMaxDescriptors: 2 } });
    const referrers = await client.listReferrers(repo, subject, callWithin(5_000));
    expect(referrers.descriptors).toHaveLength(2);
    expect(referrers.truncated).toBe(true);
    expect(server.requests).toHaveLength(3);
  });

  it.each([
    ['another host', () => '<https://elsewhere.example/v2/team/app/referrers/x?page=2>; rel="next"'],
    ['a page already read', () => `</v2/team/app/referrers/${sha256('image')}>; rel="next"`],
  ])('refuses a next link to %s', async (_name, link) => {
    const { client, repo } = await pagedRegistry(3, link);
    const error = await failure(client.listReferrers(repo, subject, callWithin(5_000)));
    expect(error.code).toBe('MALFORMED');
    expect(error.message).toContain('link to another host or back to a page already read');
  });

  it('refuses an unparseable next link', async () => {
    const { client, repo } = await pagedRegistry(3, () => '<http://[>; rel="next"');
    const error = await failure(client.listReferrers(repo, subject, callWithin(5_000)));
    expect(error.code).toBe('MALFORMED');
    expect(error.message).toContain('invalid next URL');
  });

  it('fails on a later page that is not an index', async () => {
    const server = await serve((request, response) => {
      if (request.url?.includes('page=2')) {
        sendJson(
          response,
          200,
          { schemaVersion: 2, mediaType: OCI_MANIFEST, config: {}, layers: [] },
          { 'content-type': OCI_INDEX },
        );
      } else {
        sendJson(
          response,
          200,
          { schemaVersion: 2, mediaType: OCI_INDEX, manifests: null },
          {
            'content-type': `${OCI_INDEX}; charset=utf-8`,
            link: '</v2/a/referrers/x?page=2>; rel="next"',
          },
        );
      }
    });
    const error = await failure(
      clientFor(server).listReferrers({ registry: server.host, repository: 'a' }, subject, callWithin(5_000)),
    );
    expect(error.code).toBe('MALFORMED');
  });

  it('fails on a later page that answers an error', async () => {
    const server = await serve((request, response) => {
      if (request.url?.includes('page=2')) return sendJson(response, 404, {});
      sendJson(
        response,
        200,
        { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [] },
        {
          'content-type': OCI_INDEX,
          link: '</v2/a/referrers/x?page=2>; rel="next"',
        },
      );
    });
    const error = await failure(
      clientFor(server).listReferrers({ registry: server.host, repository: 'a' }, subject, callWithin(5_000)),
    );
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toContain(`referrers of ${subject} not found`);
  });

  it('fails on a first page whose index is an image manifest', async () => {
    const server = await serve((_request, response) => {
      const body = {
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: { mediaType: OCI_EMPTY, digest: sha256('{}'), size: 2 },
      };
      sendJson(response, 200, body, { 'content-type': OCI_INDEX });
    });
    const error = await failure(
      clientFor(server).listReferrers({ registry: server.host, repository: 'a' }, subject, callWithin(5_000)),
    );
    expect(error.message).toContain('the page is not an index');
  });
});

describe('listReferrers through the fallback tag', () => {
  it('reads the sha256-<hex> tag when the referrers API answers 404', async () => {
    const { memory, server, repo, client } = await memoryRegistry();
    memory.referrersApi = false;
    const image = memory.pushImage('team/app', 'v1');
    const bundle = referrer(memory, image);
    const other = referrer(memory, image, 'application/vnd.example.sbom');
    const tag = image.digest.replace(':', '-');
    memory.pushManifest(
      'team/app',
      {
        schemaVersion: 2,
        mediaType: OCI_INDEX,
        manifests: [
          { ...bundle, artifactType: BUNDLE },
          { ...other, artifactType: 'application/vnd.example.sbom' },
        ],
      },
      { tag },
    );
    const referrers = await client.listReferrers(repo, image.digest, callWithin(5_000), {
      artifactType: BUNDLE,
    });
    expect(referrers).toMatchObject({ via: 'fallback-tag', truncated: false });
    expect(referrers.descriptors.map((descriptor) => descriptor.digest)).toEqual([bundle.digest]);
    expect(server.requests.map((request) => `${request.method} ${request.url.split('?')[0]}`)).toEqual([
      `GET /v2/team/app/referrers/${image.digest}`,
      `GET /v2/team/app/manifests/${tag}`,
    ]);
  });

  it('finds nothing when the fallback tag does not exist either', async () => {
    const { memory, repo, client } = await memoryRegistry();
    memory.referrersApi = false;
    const image = memory.pushImage('team/app', 'v1');
    expect(await client.listReferrers(repo, image.digest, callWithin(5_000))).toEqual({
      descriptors: [],
      via: 'fallback-tag',
      truncated: false,
    });
  });

  it('uses the fallback tag when the API answers 200 with something that is not an OCI index', async () => {
    const server = await serve((request, response) => {
      if (request.url?.includes('/referrers/'))
        return void response.writeHead(200, { 'content-type': 'text/html' }).end('<html>');
      sendJson(response, 404, { errors: [{ code: 'MANIFEST_UNKNOWN' }] });
    });
    const referrers = await clientFor(server).listReferrers(
      { registry: server.host, repository: 'a' },
      sha256('x'),
      callWithin(5_000),
    );
    expect(referrers.via).toBe('fallback-tag');
  });

  it('refuses a fallback tag that is not an index', async () => {
    const { memory, repo, client } = await memoryRegistry();
    memory.referrersApi = false;
    const image = memory.pushImage('team/app', 'v1');
    memory.tags.set(`team/app:${image.digest.replace(':', '-')}`, image.digest);
    const error = await failure(client.listReferrers(repo, image.digest, callWithin(5_000)));
    expect(error.code).toBe('MALFORMED');
    expect(error.message).toContain('is not an index');
  });

  it('truncates a long fallback index', async () => {
    const { memory, server, repo } = await memoryRegistry();
    memory.referrersApi = false;
    const subject = sha256('image');
    const manifests = [1, 2, 3].map((n) => ({ mediaType: OCI_MANIFEST, digest: sha256(`r${n}`), size: n }));
    memory.pushManifest(
      'team/app',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests },
      { tag: subject.replace(':', '-') },
    );
    const client = clientFor(server, { limits: { referrersMaxDescriptors: 2 } });
    const referrers = await client.listReferrers(repo, subject, callWithin(5_000));
    expect(referrers.descriptors).toHaveLength(2);
    expect(referrers.truncated).toBe(true);
  });

  it('passes other errors of the fallback tag on', async () => {
    const server = await serve((request, response) => {
      sendJson(response, request.url?.includes('/referrers/') ? 404 : 403, { errors: [{ code: 'DENIED' }] });
    });
    const error = await failure(
      clientFor(server).listReferrers(
        { registry: server.host, repository: 'a' },
        sha256('x'),
        callWithin(5_000),
      ),
    );
    expect(error.code).toBe('UNAUTHORIZED');
  });

  it('refuses a malformed subject digest', async () => {
    const { repo, client } = await memoryRegistry();
    expect((await failure(client.listReferrers(repo, 'latest', callWithin(5_000)))).code).toBe(
      'INVALID_REQUEST',
    );
  });
});
