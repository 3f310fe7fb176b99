// Where `policy.remote.url` may send Signet (issue 21, finding 6): whoever writes a
// ClusterImagePolicy chooses the URL, so a loopback, private or link-local address (or a name that
// resolves to one) is refused before any connection unless the operator listed the host, as for
// registries' token realms; and a failure says "could not reach HOST" with a short cause, never
// OpenSSL's text (which tells a plain-HTTP port from a TLS one). Real servers on loopback record
// every connection; names are resolved by an injected `lookup`, the only fake (no DNS here).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createPlainServer, type Server as PlainServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { LookupFunction, Server as NetServer } from 'node:net';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FetchFunction } from '@signet/registry';
import { dispatchFetch } from '@signet/registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remotePolicyFetcher } from '../../src/policy/remote-policy.js';
import { listenInRange } from '../support/ports.js';

const POLICY = 'package signet\n';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A `lookup` that answers every name with `address` (what a hostile DNS answer would be). */
const resolvingTo =
  (address: string): LookupFunction =>
  (_hostname, options, callback) => {
    const answer = [{ address, family: address.includes(':') ? 6 : 4 }];
    if (options.all) (callback as unknown as (e: null, a: typeof answer) => void)(null, answer);
    else callback(null, address, answer[0]?.family ?? 4);
  };

describe('remote policies and private addresses', () => {
  let dir = '';
  let ca = '';
  let server: Server;
  let plain: PlainServer;
  let proxy: NetServer;
  let port = 0;
  let plainPort = 0;
  let proxyPort = 0;
  let connections = 0;
  let proxyConnections = 0;
  const calls: string[] = [];
  const recordingFetch: FetchFunction = (url, init) => {
    calls.push(url.href);
    return dispatchFetch(url, init);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'signet-remote-guard-'));
    await promisify(execFile)(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'],
        ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1'],
        ...[
          '-subj',
          '/CN=policy.example',
          '-addext',
          'subjectAltName=IP:127.0.0.1,DNS:policy.example,DNS:localhost',
        ],
      ],
      { timeout: 20_000 },
    );
    ca = await readFile(join(dir, 'cert.pem'), 'utf8');
    server = createServer({ key: await readFile(join(dir, 'key.pem')), cert: ca }, (request, response) => {
      if (request.url !== '/cut') return response.end(POLICY);
      // Headers and part of the body, then the connection drops.
      response.writeHead(200, { 'content-length': '1000' });
      response.write('partial');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    server.on('connection', () => {
      connections += 1;
    });
    port = await listenInRange(server);
    plain = createPlainServer((_request, response) => response.end(POLICY));
    plainPort = await listenInRange(plain);
    proxy = createNetServer((socket) => {
      proxyConnections += 1;
      socket.destroy();
    });
    proxyPort = await listenInRange(proxy);
  });

  afterAll(async () => {
    server?.close();
    plain?.close();
    proxy?.close();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['loopback', () => `https://127.0.0.1:${port}/policy.rego`],
    ['localhost', () => `https://localhost:${port}/policy.rego`],
    ['IPv6 loopback', () => `https://[::1]:${port}/policy.rego`],
    ['a private address', () => 'https://10.0.0.1/policy.rego'],
    ['the metadata service', () => 'https://169.254.169.254/latest/meta-data/'],
    ['an IPv4-mapped metadata address', () => 'https://[::ffff:169.254.169.254]/x'],
  ])('refuses %s without a connection', async (_what, url) => {
    const before = { connections, calls: calls.length };
    const fetch = remotePolicyFetcher({ ca, timeoutMs: 1_000, fetch: recordingFetch });
    const failure = await fetch(url(), sha256(POLICY)).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toMatch(/could not reach .*: .*loopback, private or link-local address/);
    expect(connections).toBe(before.connections);
    expect(calls.length).toBe(before.calls);
  });

  it('refuses a name that resolves to a private address, at connect time', async () => {
    const before = connections;
    const fetch = remotePolicyFetcher({
      ca,
      timeoutMs: 2_000,
      network: { lookup: resolvingTo('127.0.0.1') },
    });
    await expect(fetch(`https://policy.example:${port}/policy.rego`, sha256(POLICY))).rejects.toThrow(
      `could not reach policy.example:${port}: it is or resolves to a loopback, private or link-local address`,
    );
    const metadata = remotePolicyFetcher({
      ca,
      timeoutMs: 2_000,
      network: { lookup: resolvingTo('169.254.169.254') },
    });
    await expect(metadata(`https://policy.example:${port}/policy.rego`, sha256(POLICY))).rejects.toThrow(
      /could not reach policy\.example:\d+: it is or resolves to/,
    );
    expect(connections).toBe(before);
  });

  it('fetches from a host the operator listed as private', async () => {
    const fetch = remotePolicyFetcher({ ca, privateHosts: [`127.0.0.1:${port}`] });
    expect(await fetch(`https://127.0.0.1:${port}/policy.rego`, sha256(POLICY))).toBe(POLICY);
    const named = remotePolicyFetcher({
      ca,
      privateHosts: [`policy.example:${port}`],
      network: { lookup: resolvingTo('127.0.0.1') },
    });
    expect(await named(`https://policy.example:${port}/policy.rego`, sha256(POLICY))).toBe(POLICY);
  });

  it('says "could not reach" with a short cause, never OpenSSL text', async () => {
    const listed = [`127.0.0.1:${plainPort}`, `127.0.0.1:${port}`];
    const openssl = /wrong version|packet length|self.signed|SSL routines|EPROTO|certificate/i;
    const plainHttp = await remotePolicyFetcher({ privateHosts: listed, timeoutMs: 2_000 })(
      `https://127.0.0.1:${plainPort}/p`,
      sha256(POLICY),
    ).catch((error: Error) => error);
    expect(String((plainHttp as Error).message)).toContain(
      `could not reach 127.0.0.1:${plainPort}: the TLS handshake failed`,
    );
    expect((plainHttp as Error).message).not.toMatch(openssl);
    // The full error stays in the cause chain for the log.
    expect(String((plainHttp as Error).cause)).not.toBe('undefined');
    const untrusted = await remotePolicyFetcher({ privateHosts: listed, timeoutMs: 2_000 })(
      `https://127.0.0.1:${port}/p`,
      sha256(POLICY),
    ).catch((error: Error) => error);
    expect((untrusted as Error).message).toContain(
      `could not reach 127.0.0.1:${port}: the TLS handshake failed`,
    );
    expect((untrusted as Error).message).not.toMatch(openssl);
    const closed = await remotePolicyFetcher({ privateHosts: ['127.0.0.1:9'], timeoutMs: 2_000 })(
      'https://127.0.0.1:9/p',
      sha256(POLICY),
    ).catch((error: Error) => error);
    expect((closed as Error).message).toContain('could not reach 127.0.0.1:9: the connection failed');
  });

  it('refuses what is not an https URL, and says a body cut short could not be read whole', async () => {
    const fetch = remotePolicyFetcher({ ca, privateHosts: [`127.0.0.1:${port}`], timeoutMs: 2_000 });
    await expect(fetch('http://policy.example/p', sha256(POLICY))).rejects.toThrow(
      'an https URL is expected',
    );
    await expect(fetch('not a url', sha256(POLICY))).rejects.toThrow('an https URL is expected');
    await expect(fetch(`https://127.0.0.1:${port}/cut`, sha256(POLICY))).rejects.toThrow(
      `fetching the policy from https://127.0.0.1:${port}/cut: could not reach 127.0.0.1:${port}: the connection failed`,
    );
  });

  it('refuses private literals through a proxy too, without asking the proxy', async () => {
    const before = proxyConnections;
    const env = { HTTPS_PROXY: `http://127.0.0.1:${proxyPort}`, HTTP_PROXY: `http://127.0.0.1:${proxyPort}` };
    const fetch = remotePolicyFetcher({ ca, timeoutMs: 1_000, network: { env } });
    await expect(fetch('https://169.254.169.254/latest/meta-data/', sha256(POLICY))).rejects.toThrow(
      /loopback, private or link-local/,
    );
    await expect(fetch(`https://localhost:${port}/p`, sha256(POLICY))).rejects.toThrow(
      /loopback, private or link-local/,
    );
    expect(proxyConnections).toBe(before);
  });
});
