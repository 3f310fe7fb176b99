// Living trust roots against a real TUF repository: made and changed by python-tuf (PyPI tuf
// 7.0.1, through @signet/testbed), served by a loopback mirror that can go away. Covers a target
// update, a root key rotation, restarts from the on-disk cache with the mirror down, an expired
// timestamp, a mirror outage (last good root kept, failure reported), the embedded fallback, and
// `remote` TrustRoots kept across compiles.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseTrustRoot } from '@signet/k8s-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trustRootResolver } from '../../src/trust/compile.js';
import { type LivingRootEvent, LivingTrustRoot } from '../../src/trust/living-root.js';
import { livingPublicGoodRoot } from '../../src/trust/public-good.js';
import { RemoteTrustRoots } from '../../src/trust/remote-roots.js';
import { trustRootFromJSON } from '../../src/trust/trusted-root.js';
import { TufMetadataCache } from '../../src/trust/tuf-cache.js';
import { makeInfra } from '../support/fixtures.js';
import { loadTestbed, type Testbed } from '../support/registry-helpers.js';

const SETUP_TIMEOUT = 15 * 60_000;

describe('living trust roots from a python-tuf repository', () => {
  let testbed: typeof Testbed;
  let dir = '';
  let repository: Testbed.TufRepository;
  let mirror: Testbed.TufMirror;
  let initialRoot: Buffer;
  const documents: Buffer[] = [];
  const caCount = (root: LivingTrustRoot) => root.current?.trustedRoot.certificateAuthorities.length;
  const subjectOf = (root: LivingTrustRoot) =>
    root.current?.trustedRoot.certificateAuthorities[0]?.certChain?.certificates[0]?.rawBytes.toString('hex');

  beforeAll(async () => {
    testbed = await loadTestbed();
    dir = await mkdtemp(join(tmpdir(), 'signet-living-root-'));
    for (let i = 0; i < 3; i++) {
      documents.push(Buffer.from(JSON.stringify((await makeInfra()).trustedRootJSON)));
    }
    repository = await testbed.TufRepository.create(
      join(dir, 'repository'),
      { 'trusted_root.json': documents[0] as Buffer },
      { onProgress: (line) => console.log(`testbed: ${line}`) },
    );
    initialRoot = await repository.initialRoot();
    mirror = await new testbed.TufMirror(join(dir, 'repository')).start();
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await mirror?.stop();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  const certOf = (document: Buffer) =>
    trustRootFromJSON(document, {
      name: 'x',
    }).trustedRoot.certificateAuthorities[0]?.certChain?.certificates[0]?.rawBytes.toString('hex');

  function living(cacheDir: string, events: LivingRootEvent[] = [], extra = {}) {
    return new LivingTrustRoot({
      name: 'private',
      origin: 'remote',
      mirror: mirror.url,
      root: initialRoot,
      cache: new TufMetadataCache({ dir: cacheDir }),
      timeoutMs: 3_000,
      onEvent: (event) => events.push(event),
      ...extra,
    });
  }

  it('follows target updates and a root key rotation, and keeps the rotated root across a restart', async () => {
    const cacheDir = join(dir, 'cache-rotation');
    const events: LivingRootEvent[] = [];
    const root = living(cacheDir, events);
    expect(root.current).toBeUndefined();
    expect(await root.refresh()).toBe(true);
    expect(root.source).toBe('mirror');
    expect(subjectOf(root)).toBe(certOf(documents[0] as Buffer));
    expect(await root.refresh()).toBe(false);

    await repository.rotateRoot();
    await repository.setTargets({ 'trusted_root.json': documents[1] as Buffer });
    expect(await root.refresh()).toBe(true);
    expect(subjectOf(root)).toBe(certOf(documents[1] as Buffer));
    expect(mirror.requests).toContain('/2.root.json');
    expect(events.map((e) => e.kind)).toEqual(['refreshed', 'refreshed', 'refreshed']);

    // A restart with the mirror gone: the cache (verified against the rotated root) is served.
    await mirror.stop();
    const restarted = living(cacheDir);
    expect(await restarted.loadCache()).toBe(true);
    expect(restarted.source).toBe('cache');
    expect(subjectOf(restarted)).toBe(certOf(documents[1] as Buffer));
    const [metadataDir] = await readdir(cacheDir);
    const cachedRoot = JSON.parse(await readFile(join(cacheDir, String(metadataDir), 'root.json'), 'utf8'));
    expect(cachedRoot.signed.version).toBe(2);
    await mirror.start();
  });

  it('keeps the last good root when the mirror goes away or its timestamp expired, and says so', async () => {
    const events: LivingRootEvent[] = [];
    const root = living(join(dir, 'cache-outage'), events);
    expect(await root.refresh()).toBe(true);
    const good = subjectOf(root);
    await mirror.stop();
    expect(await root.refresh()).toBe(false);
    const outage = events.at(-1);
    expect(outage).toMatchObject({ kind: 'failed', using: 'mirror' });
    expect(outage?.kind === 'failed' && outage.error.code).toBe('TRUST_ROOT_UNAVAILABLE');
    expect(root.lastError?.message).toContain(`cannot load trusted_root.json from ${mirror.url}`);
    expect(subjectOf(root)).toBe(good);

    await mirror.start();
    await repository.expireTimestamp();
    expect(await root.refresh()).toBe(false);
    const expired = events.at(-1);
    expect(expired?.kind).toBe('failed');
    expect(String(expired?.kind === 'failed' && (expired.error.cause as Error)?.message)).toMatch(/expired/i);
    expect(subjectOf(root)).toBe(good);
    // The expired timestamp was refused, never cached: a restart serves the last verified state.
    const restarted = living(join(dir, 'cache-outage'));
    expect(await restarted.loadCache()).toBe(true);
    expect(subjectOf(restarted)).toBe(good);
    // Publishing again (a new, valid timestamp) heals it.
    await repository.setTargets({ 'trusted_root.json': documents[2] as Buffer });
    expect(await root.refresh()).toBe(true);
    expect(subjectOf(root)).toBe(certOf(documents[2] as Buffer));
    expect(root.lastError).toBeUndefined();
  });

  it('serves the fallback until the mirror answers, and reports what stays in use', async () => {
    const fallback = trustRootFromJSON(documents[0] as Buffer, {
      name: 'public-good',
      origin: 'public-good',
    });
    const events: LivingRootEvent[] = [];
    await mirror.stop();
    const root = living(join(dir, 'cache-fallback'), events, { fallback });
    expect(root.source).toBe('fallback');
    expect(await root.refresh()).toBe(false);
    expect(events.at(-1)).toMatchObject({ kind: 'failed', using: 'fallback' });
    expect(caCount(root)).toBe(1);
    await mirror.start();
    expect(await root.refresh()).toBe(true);
    expect(root.source).toBe('mirror');
  });

  it('makes the default root unavailable, not the embedded one, while a private root was never fetched', async () => {
    await mirror.stop();
    const root = await livingPublicGoodRoot({ mirror: mirror.url, root: initialRoot, timeoutMs: 2_000 });
    expect(root.current).toBeUndefined();
    await root.refresh();
    await expect(trustRootResolver([], { defaultRoot: root })(undefined)).rejects.toMatchObject({
      code: 'TRUST_ROOT_UNAVAILABLE',
    });
    await mirror.start();
    await root.refresh();
    expect((await trustRootResolver([], { defaultRoot: root })(undefined)).origin).toBe('public-good');
    // Without a custom root, the embedded public-good root is the offline start.
    const embedded = await livingPublicGoodRoot({ mirror: 'http://127.0.0.1:9', timeoutMs: 500 });
    expect(embedded.source).toBe('fallback');
  });

  it('keeps remote TrustRoots across compiles: fetched once, refreshed on request', async () => {
    // The mirror is on loopback: listed as an operator lists a private mirror.
    const privateHosts = [new URL(mirror.url).host];
    const cacheDir = join(dir, 'cache-remote');
    const remoteRoots = new RemoteTrustRoots({ cacheDir, timeoutMs: 3_000, privateHosts });
    const trustRoot = parseTrustRoot({
      apiVersion: 'policy.sigstore.dev/v1alpha1',
      kind: 'TrustRoot',
      metadata: { name: 'private' },
      spec: { remote: { mirror: mirror.url, root: initialRoot.toString('base64') } },
    });
    const before = mirror.requests.length;
    const first = await trustRootResolver([trustRoot], { remoteRoots })('private');
    const again = await trustRootResolver([trustRoot], { remoteRoots })('private');
    expect(again).toBe(first);
    const fetched = mirror.requests.length - before;
    expect(fetched).toBeGreaterThan(0);
    await repository.setTargets({ 'trusted_root.json': documents[0] as Buffer });
    expect(await remoteRoots.refresh()).toBe(true);
    const updated = await trustRootResolver([trustRoot], { remoteRoots })('private');
    expect(updated).not.toBe(first);
    // A restart with the mirror down: the on-disk cache answers; without a cache, the TrustRoot
    // is unavailable (its authorities fail as infrastructure failures).
    await mirror.stop();
    const restarted = new RemoteTrustRoots({ cacheDir, timeoutMs: 1_000, privateHosts });
    const cached = await trustRootResolver([trustRoot], { remoteRoots: restarted })('private');
    expect(cached.trustedRoot).toEqual(updated.trustedRoot);
    const uncached = new RemoteTrustRoots({ timeoutMs: 1_000, privateHosts });
    await expect(trustRootResolver([trustRoot], { remoteRoots: uncached })('private')).rejects.toMatchObject({
      code: 'TRUST_ROOT_UNAVAILABLE',
    });
    await mirror.start();
  });
});
