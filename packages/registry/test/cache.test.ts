import { describe, expect, it } from 'vitest';
import { ExpiringCache } from '../src/cache.js';
import { JumpingClock } from './helpers/server.js';

describe('ExpiringCache', () => {
  it('expires entries on its clock', () => {
    const clock = new JumpingClock();
    const cache = new ExpiringCache<string>({ maxEntries: 10, clock });
    cache.set('a', 'x', clock.now() + 1_000);
    expect(cache.get('a')).toBe('x');
    clock.advance(1_000);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('does not store what has already expired', () => {
    const clock = new JumpingClock();
    const cache = new ExpiringCache<string>({ maxEntries: 10, clock });
    cache.set('a', 'x', clock.now());
    expect(cache.size).toBe(0);
  });

  it('evicts the least recently used entry when full', () => {
    const clock = new JumpingClock();
    const cache = new ExpiringCache<number>({ maxEntries: 2, clock });
    const later = clock.now() + 60_000;
    cache.set('a', 1, later);
    cache.set('b', 2, later);
    expect(cache.get('a')).toBe(1);
    cache.set('c', 3, later);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
    cache.set('c', 4, later);
    expect(cache.size).toBe(2);
    cache.delete('a');
    expect(cache.get('a')).toBeUndefined();
  });

  it('keeps at least one entry', () => {
    const clock = new JumpingClock();
    const cache = new ExpiringCache<number>({ maxEntries: 0, clock });
    cache.set('a', 1, clock.now() + 1_000);
    expect(cache.get('a')).toBe(1);
  });
});
