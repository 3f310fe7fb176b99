// Living roots and the TUF client with injected clients and files: deadlines, malformed targets,
// bounds and HTTP answers a real mirror rarely gives.

import type { FetchFunction } from '@signet/registry';
import { describe, expect, it } from 'vitest';
import { trustRootResolver } from '../../src/trust/compile.js';
import { LivingTrustRoot } from '../../src/trust/living-root.js';
import { livingPublicGoodRoot } from '../../src/trust/public-good.js';
import { RemoteTrustRoots } from '../../src/trust/remote-roots.js';
import { httpFiles, memoryFiles, TufFileMissing, type TufResult } from '../../src/trust/tuf-client.js';
import { makeInfra } from '../support/fixtures.js';

const root = Buffer.from('{"signed":{"_type":"root","version":1}}');
/** What a client answers for a target verified with metadata valid until 2099. */
const verified = (content: string): TufResult => ({
  content,
  expires: new Date('2099-01-01'),
  verified: new Map(),
});

describe('LivingTrustRoot with an injected client', () => {
  it('gives up at its deadline and reports a malformed target as a failure', async () => {
    const slow = new LivingTrustRoot({
      name: 'slow',
      origin: 'remote',
      mirror: 'http://mirror.invalid',
      root,
      timeoutMs: 20,
      client: () => new Promise(() => undefined),
    });
    expect(await slow.refresh()).toBe(false);
    expect(slow.lastError?.cause).toMatchObject({ message: 'no answer within 20 ms' });
    const events: string[] = [];
    const junk = new LivingTrustRoot({
      name: 'junk',
      origin: 'remote',
      mirror: 'http://mirror.invalid',
      root,
      client: async () => verified('not json'),
      clock: () => new Date(0),
      onEvent: (event) => events.push(event.kind),
    });
    expect(await junk.refresh()).toBe(false);
    expect(junk.lastError?.code).toBe('TRUST_ROOT_INVALID');
    expect(events).toEqual(['failed']);
    expect(await junk.loadCache()).toBe(false);
  });

  it('wraps what a client throws that is not a TrustRootError', async () => {
    const infra = await makeInfra();
    const living = new LivingTrustRoot({
      name: 'x',
      origin: 'remote',
      mirror: 'http://mirror.invalid',
      root,
      clock: () => new Date(0),
      client: async () => verified(JSON.stringify(infra.trustedRootJSON)),
    });
    expect(await living.refresh()).toBe(true);
    expect(living.current?.loadedAt).toEqual(new Date(0));
  });
});

describe('RemoteTrustRoots bounds', () => {
  it('keeps at most maxRoots, the newest', async () => {
    const infra = await makeInfra();
    let calls = 0;
    const roots = new RemoteTrustRoots({
      maxRoots: 1,
      client: async () => {
        calls += 1;
        return verified(JSON.stringify(infra.trustedRootJSON));
      },
    });
    const spec = (name: string) => ({ name, mirror: 'http://m', root, target: 'trusted_root.json' });
    await roots.load(spec('a'));
    await roots.load(spec('b'));
    await roots.load(spec('a'));
    expect(calls).toBe(3);
    // A first fetch that fails is not repeated by the same load, nor by loads soon after: only
    // once `retryAfterMs` has passed (the mirror may be back).
    let attempts = 0;
    let now = 0;
    const flaky = new RemoteTrustRoots({
      clock: () => new Date(now),
      retryAfterMs: 30_000,
      client: async () => {
        attempts += 1;
        if (attempts === 1) throw new Error('down for a moment');
        return verified(JSON.stringify(infra.trustedRootJSON));
      },
    });
    await expect(flaky.load(spec('d'))).rejects.toMatchObject({ code: 'TRUST_ROOT_UNAVAILABLE' });
    await expect(flaky.load(spec('d'))).rejects.toMatchObject({ code: 'TRUST_ROOT_UNAVAILABLE' });
    expect(attempts).toBe(1);
    now = 30_000;
    expect((await flaky.load(spec('d'))).name).toBe('d');
    expect(attempts).toBe(2);
    const failing = new RemoteTrustRoots({ client: async () => Promise.reject(new Error('down')) });
    await expect(failing.load(spec('c'))).rejects.toMatchObject({ code: 'TRUST_ROOT_UNAVAILABLE' });
  });
});

describe('TUF file sources', () => {
  const respond =
    (status: number, body: string, headers: Record<string, string> = {}): FetchFunction =>
    async () =>
      new Response(body, { status, headers });

  it('read HTTP answers: missing, failed, too large', async () => {
    const signal = AbortSignal.timeout(1_000);
    const files = (fetch: FetchFunction) => httpFiles({ fetch, chosenBy: 'operator' });
    await expect(files(respond(404, ''))('http://m/2.root.json', 10, signal)).rejects.toBeInstanceOf(
      TufFileMissing,
    );
    await expect(files(respond(500, 'oops'))('http://m/x', 10, signal)).rejects.toThrow(
      'the mirror answered 500 for x',
    );
    await expect(
      files(respond(200, 'x', { 'content-length': '99' }))('http://m/x', 10, signal),
    ).rejects.toThrow('larger than 10 bytes');
    await expect(files(respond(200, 'x'.repeat(20)))('http://m/x', 10, signal)).rejects.toThrow(
      'larger than 10 bytes',
    );
    expect((await files(respond(200, 'ok'))('http://m/x', 10, signal)).toString()).toBe('ok');
    await expect(files(respond(200, 'ok'))('ftp://m/x', 10, signal)).rejects.toThrow('is not an http(s) URL');
    const broken: FetchFunction = async () =>
      new Response(
        new ReadableStream({
          start: (controller) =>
            controller.error(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })),
        }),
      );
    await expect(files(broken)('http://m:8080/x', 10, signal)).rejects.toThrow(
      'could not reach m:8080: the connection failed',
    );
  });

  it('read a repository in memory, refusing what is too large', async () => {
    const files = memoryFiles('memory://r/', new Map([['timestamp.json', Buffer.from('{}')]]));
    const signal = AbortSignal.timeout(1_000);
    expect((await files('memory://r/timestamp.json', 10, signal)).toString()).toBe('{}');
    await expect(files('memory://r/timestamp.json', 1, signal)).rejects.toThrow('larger than 1 bytes');
    await expect(files('memory://other/timestamp.json', 10, signal)).rejects.toBeInstanceOf(TufFileMissing);
  });
});

describe('the default root', () => {
  it('is unavailable before any fetch when a custom root has no fallback', async () => {
    const living = await livingPublicGoodRoot({ mirror: 'http://mirror.invalid', root });
    await expect(trustRootResolver([], { defaultRoot: living })(undefined)).rejects.toThrow(
      'no trust root has been fetched from the TUF mirror yet',
    );
  });

  it('serves a given fallback', async () => {
    const infra = await makeInfra();
    const living = await livingPublicGoodRoot({ root, fallback: infra.trustRoot });
    expect((await trustRootResolver([], { defaultRoot: living })(undefined)).name).toBe('mock');
  });
});
