// TUF mirrors that whoever writes a TrustRoot names (issue 21, findings 4, 5 and 6), against a
// real repository made by python-tuf (PyPI tuf 7.0.1, through @signet/testbed) and loopback
// servers that record what reaches them: a mirror on a private address is refused unless the
// operator listed it (the operator's own --tuf-mirror always works); an endless `2.root.json` is
// cut at tuf-js's limit for a root, once per review; nothing that tuf-js has not verified reaches
// the on-disk cache, which is pruned of TrustRoots that are gone; and a frozen mirror's root stops
// being trusted when its metadata expires. Names are resolved by an injected `lookup`, the only
// fake (there is no DNS to control here).
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { parseTrustRoot } from '@signet/k8s-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trustRootResolver } from '../../src/trust/compile.js';
import { type LivingRootEvent, LivingTrustRoot } from '../../src/trust/living-root.js';
import { livingPublicGoodRoot } from '../../src/trust/public-good.js';
import { RemoteTrustRoots } from '../../src/trust/remote-roots.js';
import { makeInfra } from '../support/fixtures.js';
import { loadTestbed, type Testbed } from '../support/registry-helpers.js';

const SETUP_TIMEOUT = 15 * 60_000;
const MiB = 1024 * 1024;

const resolvingTo =
  (address: string): LookupFunction =>
  (_hostname, options, callback) => {
    const answer = [{ address, family: 4 }];
    if (options.all) (callback as unknown as (e: null, a: typeof answer) => void)(null, answer);
    else callback(null, address, 4);
  };

/** Every file below `dir`, recursively (empty when `dir` does not exist). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/**
 * A mirror serving the repository, except `2.root.json`: an endless body without Content-Length
 * (up to 64 MiB, then the connection is held open). `sent` counts what the socket accepted.
 */
function endlessMirror(dir: string) {
  const state = { sent: 0, requests: [] as string[], url: '' };
  const server = createServer((request, response) => {
    const path = normalize(new URL(request.url ?? '/', 'http://x').pathname);
    state.requests.push(path);
    if (path === '/2.root.json') {
      response.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (state.sent < 64 * MiB && !response.destroyed) {
          state.sent += chunk.length;
          if (!response.write(chunk)) return;
        }
      };
      response.on('drain', pump);
      pump();
      return;
    }
    readFile(join(dir, path)).then(
      (data) => response.end(data),
      () => response.writeHead(404).end(),
    );
  });
  return Object.assign(state, { server });
}

describe('TUF mirrors of TrustRoots', () => {
  let testbed: typeof Testbed;
  let dir = '';
  let repository: Testbed.TufRepository;
  let mirror: Testbed.TufMirror;
  let initialRoot: Buffer;
  let endless: ReturnType<typeof endlessMirror>;
  let mirrorHost = '';
  let endlessHost = '';

  const spec = (name: string, url: string, root = initialRoot) => ({
    name,
    remote: { mirror: url, root: root.toString('base64') },
    mirror: url,
    root,
    target: 'trusted_root.json',
  });

  beforeAll(async () => {
    testbed = await loadTestbed();
    dir = await mkdtemp(join(tmpdir(), 'signet-tuf-outbound-'));
    const document = Buffer.from(JSON.stringify((await makeInfra()).trustedRootJSON));
    repository = await testbed.TufRepository.create(
      join(dir, 'repository'),
      { 'trusted_root.json': document },
      { onProgress: (line) => console.log(`testbed: ${line}`) },
    );
    initialRoot = await repository.initialRoot();
    mirror = await new testbed.TufMirror(join(dir, 'repository')).start();
    mirrorHost = new URL(mirror.url).host;
    endless = endlessMirror(join(dir, 'repository'));
    await new Promise<void>((resolve) => endless.server.listen(0, '127.0.0.1', resolve));
    endlessHost = `127.0.0.1:${(endless.server.address() as AddressInfo).port}`;
    endless.url = `http://${endlessHost}`;
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await mirror?.stop();
    endless?.server.closeAllConnections();
    endless?.server.close();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('refuses a mirror on a private address, or named to resolve to one, without a request', async () => {
    const before = mirror.requests.length;
    const roots = new RemoteTrustRoots({ timeoutMs: 3_000 });
    await expect(roots.load(spec('loopback', mirror.url))).rejects.toMatchObject({
      code: 'TRUST_ROOT_UNAVAILABLE',
      message: expect.stringMatching(
        new RegExp(`could not reach ${mirrorHost}: it is or resolves to a loopback, private or link-local`),
      ),
    });
    for (const url of ['http://10.0.0.1', 'http://169.254.169.254', 'https://localhost:1']) {
      const started = Date.now();
      await expect(roots.load(spec(url, url))).rejects.toThrow(/loopback, private or link-local/);
      expect(Date.now() - started).toBeLessThan(2_000);
    }
    const port = new URL(mirror.url).port;
    const named = new RemoteTrustRoots({ timeoutMs: 3_000, network: { lookup: resolvingTo('127.0.0.1') } });
    await expect(named.load(spec('named', `http://tuf.example:${port}`))).rejects.toThrow(
      `could not reach tuf.example:${port}: it is or resolves to a loopback, private or link-local address`,
    );
    expect(mirror.requests.length).toBe(before);
  });

  it('fetches from a private mirror the operator listed, and from the operator-given --tuf-mirror', async () => {
    const listed = new RemoteTrustRoots({ timeoutMs: 5_000, privateHosts: [mirrorHost] });
    expect((await listed.load(spec('listed', mirror.url))).origin).toBe('remote');
    const named = new RemoteTrustRoots({
      timeoutMs: 5_000,
      privateHosts: [`tuf.example:${new URL(mirror.url).port}`],
      network: { lookup: resolvingTo('127.0.0.1') },
    });
    expect((await named.load(spec('named', `http://tuf.example:${new URL(mirror.url).port}`))).name).toBe(
      'named',
    );
    const operator = await livingPublicGoodRoot({ mirror: mirror.url, root: initialRoot, timeoutMs: 5_000 });
    expect(await operator.refresh()).toBe(true);
    expect(operator.source).toBe('mirror');
  });

  it("cuts an endless 2.root.json at tuf-js's limit for a root, fetched once per review", async () => {
    const rss = process.memoryUsage().rss;
    const started = Date.now();
    const roots = new RemoteTrustRoots({ timeoutMs: 8_000, privateHosts: [endlessHost] });
    const failure = await roots.load(spec('endless', endless.url)).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure?.message).toMatch(/cannot load trusted_root\.json from .*: .*larger than 512000 bytes/);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(endless.requests.filter((path) => path === '/2.root.json')).toHaveLength(1);
    // What the socket took before Signet hung up: the limit plus kernel buffers, not 64 MiB.
    expect(endless.sent).toBeLessThan(16 * MiB);
    expect(process.memoryUsage().rss - rss).toBeLessThan(128 * MiB);
  });

  it('writes nothing unverified to the cache: failed reviews leave nothing, oversized roots are refused', async () => {
    const cacheDir = join(dir, 'cache-unverified');
    const roots = new RemoteTrustRoots({ cacheDir, timeoutMs: 2_000, privateHosts: ['127.0.0.1:9'] });
    // 20 reviews of distinct TrustRoots whose (padded, unsigned-for-this-mirror) root cannot verify.
    for (let i = 0; i < 20; i++) {
      const padded = Buffer.from(
        JSON.stringify({
          signed: { _type: 'root', version: 1, review: i, padding: 'x'.repeat(400_000) },
          signatures: [],
        }),
      );
      await expect(roots.load(spec(`review-${i}`, 'http://127.0.0.1:9', padded))).rejects.toMatchObject({
        code: 'TRUST_ROOT_UNAVAILABLE',
      });
    }
    expect(await filesUnder(cacheDir)).toEqual([]);
    // A root larger than tuf-js accepts for one is refused before anything is fetched or written.
    const huge = Buffer.from(
      JSON.stringify({
        signed: { _type: 'root', version: 1, padding: 'x'.repeat(2_500_000) },
        signatures: [],
      }),
    );
    const before = mirror.requests.length;
    const trustRoot = parseTrustRoot({
      apiVersion: 'policy.sigstore.dev/v1alpha1',
      kind: 'TrustRoot',
      metadata: { name: 'huge' },
      spec: { remote: { mirror: mirror.url, root: huge.toString('base64') } },
    });
    const listed = new RemoteTrustRoots({ cacheDir, privateHosts: [mirrorHost] });
    await expect(trustRootResolver([trustRoot], { remoteRoots: listed })('huge')).rejects.toMatchObject({
      code: 'TRUST_ROOT_INVALID',
      message: expect.stringContaining('larger than 512000 bytes'),
    });
    expect(mirror.requests.length).toBe(before);
    expect(await filesUnder(cacheDir)).toEqual([]);
  });

  it('caches what tuf-js verified, and prunes the cache of TrustRoots that are gone', async () => {
    const cacheDir = join(dir, 'cache-pruned');
    const roots = new RemoteTrustRoots({ cacheDir, timeoutMs: 5_000, privateHosts: [mirrorHost] });
    const trustRoot = parseTrustRoot({
      apiVersion: 'policy.sigstore.dev/v1alpha1',
      kind: 'TrustRoot',
      metadata: { name: 'kept' },
      spec: { remote: { mirror: mirror.url, root: initialRoot.toString('base64') } },
    });
    await trustRootResolver([trustRoot], { remoteRoots: roots })('kept');
    const files = await filesUnder(cacheDir);
    const names = files.map((f) => f.split('/').slice(-2).join('/'));
    expect(names).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/\/root\.json$/),
        expect.stringMatching(/\/timestamp\.json$/),
        expect.stringMatching(/\/snapshot\.json$/),
        expect.stringMatching(/\/targets\.json$/),
        'targets/trusted_root.json',
      ]),
    );
    // Still there while the TrustRoot exists, gone with it.
    await roots.retain([trustRoot]);
    expect((await filesUnder(cacheDir)).length).toBe(files.length);
    await roots.retain([]);
    expect(await filesUnder(cacheDir)).toEqual([]);
    // A cache directory left by an earlier process for a TrustRoot that is gone is pruned too.
    await trustRootResolver([trustRoot], { remoteRoots: roots })('kept');
    const restarted = new RemoteTrustRoots({ cacheDir, privateHosts: [mirrorHost] });
    await restarted.retain([]);
    expect(await filesUnder(cacheDir)).toEqual([]);
    expect((await stat(cacheDir)).isDirectory()).toBe(true);
  });

  it("stops trusting a frozen mirror's root once the metadata it was verified with expired", async () => {
    let now = new Date();
    const events: LivingRootEvent[] = [];
    const living = new LivingTrustRoot({
      name: 'frozen',
      origin: 'remote',
      mirror: mirror.url,
      root: initialRoot,
      timeoutMs: 5_000,
      clock: () => now,
      onEvent: (event) => events.push(event),
    });
    expect(await living.refresh()).toBe(true);
    const expires = living.expiresAt;
    expect(expires?.getTime()).toBeGreaterThan(now.getTime());
    // The mirror freezes: it serves a timestamp that has expired. The root stays in use while the
    // metadata it was verified with is still valid, and the failure says the mirror's has expired.
    await repository.expireTimestamp();
    expect(await living.refresh()).toBe(false);
    expect(events.at(-1)).toMatchObject({ kind: 'failed', expired: true, using: 'mirror' });
    expect(living.current).toBeDefined();
    // Past the expiry of what it was verified with, it is no longer trusted: a change (recompile).
    now = new Date((expires?.getTime() ?? 0) + 1_000);
    expect(living.current).toBeUndefined();
    expect(await living.refresh()).toBe(true);
    expect(events.at(-1)).toMatchObject({ kind: 'failed', expired: true, using: 'none' });
    expect(living.lastError?.message).toMatch(/metadata has expired/);
    expect(living.current).toBeUndefined();
    // The mirror publishes again: trusted again.
    now = new Date();
    await repository.setTargets({
      'trusted_root.json': Buffer.from(JSON.stringify((await makeInfra()).trustedRootJSON)),
    });
    expect(await living.refresh()).toBe(true);
    expect(living.current).toBeDefined();
  });
});
