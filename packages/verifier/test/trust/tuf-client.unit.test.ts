// The TUF client against in-process repositories (signed with real keys by test/support/tuf.ts,
// read from memory): the per-update byte budget, offline updates from verified metadata only, the
// expiry it reports, and how the living and remote roots use it (cache keys, the cache read
// offline, expiry, bounds). The HTTP side is tested against real servers in tuf-outbound.test.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseTrustRoot } from '@signet/k8s-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LivingTrustRoot } from '../../src/trust/living-root.js';
import { livingPublicGoodRoot } from '../../src/trust/public-good.js';
import { RemoteTrustRoots } from '../../src/trust/remote-roots.js';
import { loadRemoteTrustRoot } from '../../src/trust/tuf.js';
import { TufMetadataCache } from '../../src/trust/tuf-cache.js';
import { memoryFiles, type TufRequest, type TufResult, tufJsClient } from '../../src/trust/tuf-client.js';
import { type Infra, makeInfra } from '../support/fixtures.js';
import { makeTufRepo } from '../support/tuf.js';

const MIRROR = 'memory://repo';
const seconds = (ms: number) => new Date(Date.now() + ms).toISOString().replace(/\.\d+Z$/, 'Z');

let infra: Infra;
let document: Buffer;
let dir = '';
beforeAll(async () => {
  infra = await makeInfra();
  document = Buffer.from(JSON.stringify(infra.trustedRootJSON));
  dir = await mkdtemp(join(tmpdir(), 'signet-tuf-client-'));
});
afterAll(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

function request(repo: ReturnType<typeof makeTufRepo>, extra: Partial<TufRequest> = {}): TufRequest {
  return {
    mirror: MIRROR,
    root: repo.root,
    target: 'trusted_root.json',
    timeoutMs: 5_000,
    files: memoryFiles(MIRROR, repo.files),
    ...extra,
  };
}

describe('tufJsClient', () => {
  it('returns the target, the earliest expiry and what it verified', async () => {
    const expires = '2090-05-06T07:08:09Z';
    const repo = makeTufRepo({ 'trusted_root.json': document }, { expires, rotateRoot: true });
    const result = await tufJsClient(request(repo));
    expect(result.content).toBe(document.toString());
    expect(result.expires).toEqual(new Date(expires));
    expect([...result.verified.keys()].sort()).toEqual([
      'root.json',
      'snapshot.json',
      'targets.json',
      'targets/trusted_root.json',
      'timestamp.json',
    ]);
    // The rotated root is what was verified and kept, not the initial one.
    expect(JSON.parse(String(result.verified.get('root.json'))).signed.version).toBe(2);
  });

  it('reads an http mirror through the private-address guard by default, and says what a source could not read', async () => {
    const repo = makeTufRepo({ 'trusted_root.json': document });
    const { files: _files, ...unguarded } = request(repo, { mirror: 'http://127.0.0.1:9' });
    await expect(tufJsClient(unguarded)).rejects.toMatchObject({
      reason: 'unreachable',
      message: expect.stringContaining('could not reach 127.0.0.1:9: it is or resolves to a loopback'),
    });
    const failing = request(repo, {
      files: async () => {
        throw new Error('disk on fire');
      },
    });
    await expect(tufJsClient(failing)).rejects.toMatchObject({
      reason: 'invalid',
      message: '2.root.json could not be read',
    });
  });

  it('stops an update that downloads more than its budget', async () => {
    const repo = makeTufRepo({ 'trusted_root.json': document });
    await expect(tufJsClient(request(repo, { maxBytes: 600 }))).rejects.toMatchObject({
      reason: 'too-large',
      message: 'the update is larger than 600 bytes',
    });
  });

  it('works offline from verified metadata only, and refuses it once expired', async () => {
    const repo = makeTufRepo({ 'trusted_root.json': document }, { expires: seconds(1_500) });
    const online = await tufJsClient(request(repo));
    // A path that could climb out of the update's directory is never written.
    const cached = new Map([...online.verified, ['../outside.json', Buffer.from('{}')]]);
    const offline = { files: memoryFiles(MIRROR, new Map()), offline: true, cached };
    expect((await tufJsClient(request(repo, offline))).content).toBe(document.toString());
    const noTarget = new Map([...online.verified].filter(([path]) => !path.startsWith('targets/')));
    await expect(tufJsClient(request(repo, { ...offline, cached: noTarget }))).rejects.toThrow(
      'trusted_root.json is not in the cache',
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    // tuf-js asks the mirror for a newer timestamp when the cached one expired: offline, none.
    await expect(tufJsClient(request(repo, offline))).rejects.toThrow('timestamp.json is not in the cache');
  });
});

describe('living roots with an in-memory repository', () => {
  it('key the cache by mirror, root and a target other than the default', () => {
    const root = Buffer.from('{}');
    const base = LivingTrustRoot.cacheKey({ mirror: 'https://m', root });
    expect(LivingTrustRoot.cacheKey({ mirror: 'https://m', root, target: 'trusted_root.json' })).toBe(base);
    expect(LivingTrustRoot.cacheKey({ mirror: 'https://m', root, target: 'custom.json' })).not.toBe(base);
    expect(base).toMatch(/^[0-9a-f]{16}$/);
  });

  it('load the cache only when it verifies, and write only what verified', async () => {
    const repo = makeTufRepo({ 'trusted_root.json': document });
    const cache = new TufMetadataCache({ dir: join(dir, 'living') });
    const options = { name: 'r', origin: 'remote' as const, mirror: MIRROR, root: repo.root, cache };
    const files = memoryFiles(MIRROR, repo.files);
    const empty = new LivingTrustRoot({ ...options, files });
    expect(await empty.loadCache()).toBe(false);
    expect(await empty.refresh()).toBe(true);
    const key = LivingTrustRoot.cacheKey(options);
    expect((await cache.read(key))?.has('timestamp.json')).toBe(true);
    const restarted = new LivingTrustRoot({ ...options, files: memoryFiles(MIRROR, new Map()) });
    expect(await restarted.loadCache()).toBe(true);
    expect(restarted.source).toBe('cache');
    expect(await restarted.loadCache()).toBe(false);
    // A cache entry that does not verify (another repository's metadata) is not served.
    const other = makeTufRepo({ 'trusted_root.json': document });
    await cache.write(key, new Map([...other.files].filter(([path]) => !path.includes('/'))));
    const tampered = new LivingTrustRoot({ ...options, files });
    expect(await tampered.loadCache()).toBe(false);
  });

  it('fall back to the embedded root when the metadata of the fetched one expired', async () => {
    const repo = makeTufRepo({ 'trusted_root.json': document }, { expires: '2090-01-01T00:00:00Z' });
    let now = new Date();
    const living = await livingPublicGoodRoot({
      mirror: MIRROR,
      root: repo.root,
      fallback: infra.trustRoot,
      files: memoryFiles(MIRROR, repo.files),
      clock: () => now,
      cacheDir: join(dir, 'default'),
    });
    expect(living.source).toBe('fallback');
    expect(await living.refresh()).toBe(true);
    expect(living.source).toBe('mirror');
    expect(living.expiresAt).toEqual(new Date('2090-01-01T00:00:00Z'));
    now = new Date('2091-01-01T00:00:00Z');
    expect(living.source).toBe('fallback');
    expect(living.expiresAt).toBeUndefined();
    const cache = new TufMetadataCache({ dir: join(dir, 'given') });
    const withCache = await livingPublicGoodRoot({
      mirror: MIRROR,
      root: repo.root,
      cache,
      cacheDir: 'ignored',
    });
    expect(await withCache.loadCache()).toBe(false);
  });
});

describe('RemoteTrustRoots bounds and bookkeeping', () => {
  const verified = (expires: string): TufResult => ({
    content: JSON.stringify(infra.trustedRootJSON),
    expires: new Date(expires),
    verified: new Map(),
  });
  const spec = (name: string) => ({
    name,
    mirror: 'https://m',
    root: Buffer.from(name),
    target: 'trusted_root.json',
  });

  it('fetch at most `concurrency` at once, and say when the first root expires', async () => {
    let running = 0;
    let most = 0;
    const events: string[] = [];
    const roots = new RemoteTrustRoots({
      concurrency: 2,
      onEvent: (event) => events.push(`${event.kind} ${event.name}`),
      client: async (request) => {
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 20));
        running -= 1;
        if (request.root.toString() === 'down') throw new Error('down');
        return verified(request.root.toString() === 'b' ? '2080-01-01T00:00:00Z' : '2090-01-01T00:00:00Z');
      },
    });
    expect(roots.earliestExpiry()).toBeUndefined();
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((name) => roots.load(spec(name))));
    expect(most).toBe(2);
    await expect(roots.load(spec('down'))).rejects.toMatchObject({ code: 'TRUST_ROOT_UNAVAILABLE' });
    // Loaded again at once: not fetched again (the default 30 s have not passed).
    await expect(roots.load(spec('down'))).rejects.toMatchObject({ code: 'TRUST_ROOT_UNAVAILABLE' });
    expect(events.filter((e) => e === 'failed down')).toHaveLength(1);
    expect(roots.earliestExpiry()).toEqual(new Date('2080-01-01T00:00:00Z'));
  });

  it('retain the remote TrustRoots that exist, skipping other forms and roots that do not decode', async () => {
    const repo = makeTufRepo({});
    const trustRoot = (name: string, spec: object) =>
      parseTrustRoot({
        apiVersion: 'policy.sigstore.dev/v1alpha1',
        kind: 'TrustRoot',
        metadata: { name },
        spec,
      });
    let calls = 0;
    const roots = new RemoteTrustRoots({
      client: async () => {
        calls += 1;
        return verified('2090-01-01T00:00:00Z');
      },
    });
    const kept = trustRoot('kept', { remote: { mirror: 'https://m/', root: repo.root.toString('base64') } });
    await loadRemoteTrustRoot('kept', kept.spec.remote as never, { remoteRoots: roots });
    await roots.retain([
      kept,
      trustRoot('keys', { sigstoreKeys: { certificateAuthorities: [] } }),
      trustRoot('broken', { remote: { mirror: 'https://m', root: 'bm90IGpzb24=' } }),
    ]);
    await loadRemoteTrustRoot('kept', kept.spec.remote as never, { remoteRoots: roots });
    expect(calls).toBe(1);
    await roots.retain([]);
    await loadRemoteTrustRoot('kept', kept.spec.remote as never, { remoteRoots: roots });
    expect(calls).toBe(2);
  });

  it('refuse a mirror that is not an http(s) URL', async () => {
    const repo = makeTufRepo({});
    for (const mirror of ['ftp://m', 'not a url', 'https://']) {
      await expect(
        loadRemoteTrustRoot('x', { mirror, root: repo.root.toString('base64') }),
      ).rejects.toMatchObject({
        code: 'TRUST_ROOT_INVALID',
        message: `TrustRoot "x": mirror ${JSON.stringify(mirror)} is not an http(s) URL`,
      });
    }
  });
});
