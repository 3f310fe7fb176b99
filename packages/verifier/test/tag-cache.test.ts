import { describe, expect, it } from 'vitest';
import { TagCache } from '../src/tag-cache.js';

describe('TagCache', () => {
  it('reuses a resolution within the TTL, shares one in flight, and forgets failures', async () => {
    let now = 0;
    const cache = new TagCache({ ttlMs: 1000, now: () => now });
    let calls = 0;
    const resolve = () => {
      calls++;
      return Promise.resolve(`sha256:${calls}`);
    };
    const first = cache.get('r/a:v1', resolve);
    const second = cache.get('r/a:v1', resolve);
    expect([await first.digest, await second.digest, first.shared, second.shared]).toEqual([
      'sha256:1',
      'sha256:1',
      false,
      true,
    ]);
    now = 999;
    expect(await cache.get('r/a:v1', resolve).digest).toBe('sha256:1');
    now = 1000;
    expect(await cache.get('r/a:v1', resolve).digest).toBe('sha256:2');
    const failing = cache.get('r/b:v1', () => Promise.reject(new Error('down')));
    await expect(failing.digest).rejects.toThrow('down');
    expect(await cache.get('r/b:v1', resolve).digest).toBe('sha256:3');
    expect(calls).toBe(3);
  });

  it('is bounded, oldest first, and can be off', async () => {
    const cache = new TagCache({ maxEntries: 2 });
    let calls = 0;
    const resolve = () => Promise.resolve(`sha256:${++calls}`);
    for (const key of ['a', 'b', 'c']) await cache.get(key, resolve).digest;
    expect(await cache.get('a', resolve).digest).toBe('sha256:4');
    const off = new TagCache({ ttlMs: 0 });
    await off.get('x', resolve).digest;
    expect((await off.get('x', resolve)).shared).toBe(false);
    expect(calls).toBe(6);
  });
});

describe('TagCache replacing an entry', () => {
  it('keeps a newer resolution when an older one, still in flight, fails', async () => {
    let now = 0;
    const cache = new TagCache({ ttlMs: 100, now: () => now });
    let fail: (error: Error) => void = () => undefined;
    const old = cache.get('r/a:v1', () => new Promise<string>((_, reject) => (fail = reject)));
    now = 200;
    const fresh = cache.get('r/a:v1', () => Promise.resolve('sha256:new'));
    fail(new Error('late failure'));
    await expect(old.digest).rejects.toThrow('late failure');
    expect(await fresh.digest).toBe('sha256:new');
    expect(await cache.get('r/a:v1', () => Promise.resolve('sha256:other')).digest).toBe('sha256:new');
  });
});
