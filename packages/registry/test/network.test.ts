// Registry access as clusters have it, against real programs: CNCF distribution serving TLS from a
// private CA, plain HTTP where HTTPS was expected, on a port browsers block; the testbed's forward
// proxy (goproxy) as the HTTP(S) proxy with NO_PROXY for in-cluster registries. Token servers and
// name resolution that the tests must control are in-process (said where they are).

import type { LookupAddress } from 'node:dns';
import { rm } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, LookupFunction } from 'node:net';
import { createServer as createNetServer } from 'node:net';
import { describeCause } from '@signet/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryClient } from '../src/client.js';
import { RegistryError } from '../src/errors.js';
import { dispatchFetch } from '../src/net/request.js';
import { callWithin } from './helpers/server.js';
import { ensureTestTools, loadTestbed, type Testbed } from './helpers/testbed.js';

const SETUP_TIMEOUT = 30 * 60_000;
/** Ports the WHATWG fetch standard blocks ("bad ports"); the test uses the first one free here. */
const BLOCKED_PORTS = [10080, 6566, 6679, 6665, 6666, 6667, 6668, 6669, 6000];

async function failure(promise: Promise<unknown>): Promise<RegistryError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RegistryError);
  return error as RegistryError;
}

async function firstFreePort(ports: readonly number[]): Promise<number> {
  for (const port of ports) {
    const free = await new Promise<boolean>((resolve) => {
      const probe = createNetServer();
      probe.once('error', () => resolve(false));
      probe.listen({ host: '127.0.0.1', port, exclusive: true }, () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error(`none of the blocked ports ${ports.join(', ')} is free on 127.0.0.1`);
}

describe('registries as clusters reach them', () => {
  let testbed: typeof Testbed;
  let group: Testbed.ProcessGroup | undefined;
  let runDir = '';
  let crane = '';
  let plain: Testbed.Registry;
  let privateCa: Testbed.PrivateCa;
  let tlsRegistry: Testbed.Registry;
  let blocked: Testbed.Registry;
  let proxy: Testbed.HttpProxy;
  const digests = new Map<string, string>();

  beforeAll(async () => {
    testbed = await loadTestbed();
    ({ crane } = await ensureTestTools(testbed, ['registry', 'crane']));
    runDir = await testbed.createRunDir('signet-verifier-network-');
    group = new testbed.ProcessGroup({ runDir, graceMs: 2_000 });
    privateCa = await testbed.createPrivateCa(runDir, ['127.0.0.1', 'localhost'], 'registry');
    const blockedPort = await firstFreePort(BLOCKED_PORTS);
    [plain, tlsRegistry, blocked, proxy] = await Promise.all([
      testbed.startRegistry({ referrers: false, group }),
      testbed.startRegistry({
        referrers: false,
        group,
        tls: {
          certificateFile: privateCa.certificateFile,
          keyFile: privateCa.keyFile,
          caPem: privateCa.caPem,
        },
      }),
      testbed.startRegistry({ referrers: false, group, port: blockedPort }),
      testbed.startHttpProxy({ group }),
    ]);
    for (const registry of [plain, tlsRegistry, blocked]) {
      const digest = await testbed.pushRandomImage(registry, 'team/app', 'v1', { crane, workDir: runDir });
      digests.set(registry.host, digest);
    }
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await group?.stopAll();
    if (runDir !== '' && !process.env.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
  });

  const tag = (registry: Testbed.Registry) => ({
    registry: registry.host,
    repository: 'team/app',
    tag: 'v1',
  });

  describe('plain HTTP where HTTPS was expected', () => {
    it('says the registry answered plain HTTP and how to allow it, after one attempt', async () => {
      let attempts = 0;
      const client = new RegistryClient({
        fetch: (url, init) => {
          attempts++;
          return dispatchFetch(url, init);
        },
      });
      const error = await failure(client.resolveDigest(tag(plain), callWithin(10_000)));
      expect(error.code).toBe('TLS_FAILED');
      expect(error.message).toBe(
        `registry ${plain.host} repository team/app: ${plain.host} answered plain HTTP to an HTTPS request; ` +
          'if it serves plain HTTP, add it to the insecure registries',
      );
      expect(error.message).not.toMatch(/SSL routines|openssl|wrong version/i);
      // OpenSSL's text stays on the cause for logs, and is not repeated where the error is described.
      expect(describeCause(error)).toBe(error.message);
      expect(attempts).toBe(1);
    });
  });

  describe('ports browsers block', () => {
    it(`reaches a registry on a port WHATWG fetch refuses`, async () => {
      await expect(fetch(`${blocked.url}/v2/`)).rejects.toThrow('fetch failed');
      const client = new RegistryClient({ insecureHosts: [blocked.host] });
      expect(await client.resolveDigest(tag(blocked), callWithin(10_000))).toBe(digests.get(blocked.host));
    });
  });

  describe('a registry with a certificate from a private CA', () => {
    it('fails without the CA bundle, saying so', async () => {
      const client = new RegistryClient();
      const error = await failure(client.resolveDigest(tag(tlsRegistry), callWithin(10_000)));
      expect(error.code).toBe('TLS_FAILED');
      expect(error.message).toBe(
        `registry ${tlsRegistry.host} repository team/app: TLS with ${tlsRegistry.host} failed: its certificate ` +
          'is not issued by a CA Signet trusts (UNABLE_TO_VERIFY_LEAF_SIGNATURE); if a private CA issued it, ' +
          'add that CA to the registry CA bundle',
      );
    });

    it('works with the CA bundle', async () => {
      const client = new RegistryClient({ caCertificates: [privateCa.caPem] });
      expect(await client.resolveDigest(tag(tlsRegistry), callWithin(10_000))).toBe(
        digests.get(tlsRegistry.host),
      );
    });

    it('uses the CA bundle for the token realm too', async () => {
      // An in-process registry front and token server, both with certificates from the private CA:
      // distribution cannot be told to answer with a realm on another port of this test.
      const issuedToken = 'private-ca-token';
      const realm = await listenTls(privateCa, (request, response) => {
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ token: issuedToken }));
        void request;
      });
      const front = await listenTls(privateCa, (request, response) => {
        if (request.headers.authorization === `Bearer ${issuedToken}`) {
          response.writeHead(200, { 'docker-content-digest': `sha256:${'b'.repeat(64)}` }).end();
          return;
        }
        response
          .writeHead(401, {
            'www-authenticate': `Bearer realm="https://localhost:${realm.port}/token",service="s"`,
          })
          .end();
      });
      try {
        const client = new RegistryClient({
          caCertificates: [privateCa.caPem],
          privateHosts: [`localhost:${realm.port}`],
        });
        const ref = { registry: `127.0.0.1:${front.port}`, repository: 'team/app', tag: 'v1' };
        expect(await client.resolveDigest(ref, callWithin(10_000))).toBe(`sha256:${'b'.repeat(64)}`);
        const without = new RegistryClient({ privateHosts: [`localhost:${realm.port}`] });
        expect((await failure(without.resolveDigest(ref, callWithin(10_000)))).code).toBe('TLS_FAILED');
      } finally {
        await Promise.all([realm.close(), front.close()]);
      }
    });
  });

  describe('through an HTTP(S) proxy', () => {
    it('sends registry traffic through HTTPS_PROXY and HTTP_PROXY', async () => {
      const env = { HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url };
      const client = new RegistryClient({
        env,
        caCertificates: [privateCa.caPem],
        insecureHosts: [plain.host],
      });
      expect(await client.resolveDigest(tag(tlsRegistry), callWithin(10_000))).toBe(
        digests.get(tlsRegistry.host),
      );
      expect(await client.resolveDigest(tag(plain), callWithin(10_000))).toBe(digests.get(plain.host));
      const targets = await proxy.targets();
      // HTTPS is tunnelled (CONNECT host:port), plain HTTP forwarded (GET http://host:port/...).
      expect(targets).toContain(tlsRegistry.host);
      expect(targets).toContain(plain.host);
    });

    it('reaches registries matched by NO_PROXY directly (in-cluster registries)', async () => {
      const before = (await proxy.targets()).length;
      const env = {
        https_proxy: proxy.url,
        http_proxy: proxy.url,
        no_proxy: `.svc,.cluster.local,${blocked.host}`,
      };
      const client = new RegistryClient({ env, insecureHosts: [blocked.host] });
      expect(await client.resolveDigest(tag(blocked), callWithin(10_000))).toBe(digests.get(blocked.host));
      expect((await proxy.targets()).slice(before)).toEqual([]);
    });

    it('reports a proxy that cannot be reached as the registry being unreachable', async () => {
      const env = { HTTPS_PROXY: 'http://127.0.0.1:1' };
      const client = new RegistryClient({ env, retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } });
      const error = await failure(client.resolveDigest(tag(tlsRegistry), callWithin(5_000)));
      expect(error.code).toBe('UNREACHABLE');
      expect(error.message).toContain('ECONNREFUSED');
    });
  });
});

describe('names that resolve to private addresses (issue 9, item 7)', () => {
  /** A lookup that answers from a table: the names a hostile registry could point at. */
  function table(entries: Readonly<Record<string, readonly string[]>>): LookupFunction {
    return (hostname, _options, callback) => {
      const addresses = entries[hostname];
      if (addresses === undefined) {
        callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
        return;
      }
      const all: LookupAddress[] = addresses.map((address) => ({
        address,
        family: address.includes(':') ? 6 : 4,
      }));
      (callback as unknown as (error: null, all: LookupAddress[]) => void)(null, all);
    };
  }

  it.each([
    ['a private address', ['10.0.0.5'], '10.0.0.5'],
    ['cloud metadata', ['169.254.169.254'], '169.254.169.254'],
    ['loopback among public addresses', ['8.8.8.8', '127.0.0.1'], '127.0.0.1'],
    ['NAT64 of loopback', ['64:ff9b::7f00:1'], '64:ff9b::7f00:1'],
  ])('refuses a token realm whose name resolves to %s, at connect time', async (_name, addresses, shown) => {
    const registry = await listenPlain((request, response) => {
      void request;
      response.writeHead(401, { 'www-authenticate': 'Bearer realm="https://realm.test:8443/token"' }).end();
    });
    try {
      const client = new RegistryClient({
        insecureHosts: [`127.0.0.1:${registry.port}`],
        lookup: table({ 'realm.test': addresses }),
        retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 },
      });
      const ref = { registry: `127.0.0.1:${registry.port}`, repository: 'team/app', tag: 'v1' };
      const error = await failure(client.resolveDigest(ref, callWithin(5_000)));
      expect(error.code).toBe('INSECURE_REFUSED');
      expect(error.message).toContain(`https://realm.test:8443/token: realm.test resolves to ${shown}`);
    } finally {
      await registry.close();
    }
  });

  it('keeps a registry that lives on a private network (its own host) working', async () => {
    const registry = await listenPlain((request, response) => {
      void request;
      response.writeHead(200, { 'docker-content-digest': `sha256:${'c'.repeat(64)}` }).end();
    });
    try {
      const host = `registry.internal:${registry.port}`;
      const client = new RegistryClient({
        insecureHosts: [host],
        lookup: table({ 'registry.internal': ['127.0.0.1'] }),
      });
      const ref = { registry: host, repository: 'team/app', tag: 'v1' };
      expect(await client.resolveDigest(ref, callWithin(5_000))).toBe(`sha256:${'c'.repeat(64)}`);
    } finally {
      await registry.close();
    }
  });
});

type Listener = { port: number; close(): Promise<void> };

async function listenTls(
  ca: Testbed.PrivateCa,
  handler: (
    request: import('node:http').IncomingMessage,
    response: import('node:http').ServerResponse,
  ) => void,
): Promise<Listener> {
  const server = createHttpsServer({ cert: ca.certificatePem, key: ca.keyPem }, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function listenPlain(
  handler: (
    request: import('node:http').IncomingMessage,
    response: import('node:http').ServerResponse,
  ) => void,
): Promise<Listener> {
  const { createServer } = await import('node:http');
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
