// The on-disk TUF cache on a real directory: entries replaced whole, bounded by count, total and
// entry size (the oldest written go first), pruned to the trust roots that exist, and never
// written outside its directory whatever the keys and paths it is given.
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCacheFilePath, TufMetadataCache } from '../../src/trust/tuf-cache.js';

const key = (n: number) => n.toString(16).padStart(16, '0');
const entry = (size: number, extra: Record<string, Buffer> = {}) =>
  new Map<string, Buffer>([
    ['root.json', Buffer.alloc(size, 0x61)],
    ['targets/trusted_root.json', Buffer.from('{}')],
    ...Object.entries(extra),
  ]);

describe('TufMetadataCache', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'signet-tuf-cache-'));
  });
  afterAll(async () => {
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('writes an entry whole, reads it back and replaces it', async () => {
    const cache = new TufMetadataCache({ dir: join(dir, 'basic') });
    expect(await cache.read(key(1))).toBeUndefined();
    expect(await cache.write(key(1), entry(10))).toBe(true);
    expect([...((await cache.read(key(1))) ?? new Map()).keys()].sort()).toEqual([
      'root.json',
      'targets/trusted_root.json',
    ]);
    expect(await cache.write(key(1), new Map([['root.json', Buffer.from('v2')]]))).toBe(true);
    const replaced = await cache.read(key(1));
    expect([...(replaced?.keys() ?? [])]).toEqual(['root.json']);
    expect(replaced?.get('root.json')?.toString()).toBe('v2');
    expect(await readdir(join(dir, 'basic'))).toEqual([key(1)]);
  });

  it('keeps at most maxEntries and maxBytes, dropping the oldest written first', async () => {
    const cache = new TufMetadataCache({ dir: join(dir, 'bounded'), maxEntries: 2, maxBytes: 1_000 });
    await cache.write(key(1), entry(100));
    await utimes(join(dir, 'bounded', key(1)), new Date(1_000), new Date(1_000));
    await cache.write(key(2), entry(100));
    await utimes(join(dir, 'bounded', key(2)), new Date(2_000), new Date(2_000));
    await cache.write(key(3), entry(100));
    expect((await readdir(join(dir, 'bounded'))).sort()).toEqual([key(2), key(3)]);
    // 700 bytes more: key(2) has to go for the total to fit; the entry just written stays.
    expect(await cache.write(key(4), entry(700))).toBe(true);
    expect((await readdir(join(dir, 'bounded'))).sort()).toEqual([key(3), key(4)].sort());
    // Even when the others look newer (clocks move): the entry just written is never the one dropped.
    const future = new Date(Date.now() + 3_600_000);
    await utimes(join(dir, 'bounded', key(3)), future, future);
    await utimes(join(dir, 'bounded', key(4)), future, future);
    expect(await cache.write(key(5), entry(10))).toBe(true);
    expect((await readdir(join(dir, 'bounded'))).sort()).toEqual([key(4), key(5)]);
  });

  it('does not keep an entry larger than maxEntryBytes, nor one it cannot name safely', async () => {
    const cache = new TufMetadataCache({ dir: join(dir, 'refused'), maxEntryBytes: 64 });
    expect(await cache.write(key(1), entry(100))).toBe(false);
    expect(await cache.write('../escape', entry(1))).toBe(false);
    expect(await cache.write(key(2), new Map([['../root.json', Buffer.from('x')]]))).toBe(false);
    expect(await cache.write(key(3), new Map([['targets/../../x', Buffer.from('x')]]))).toBe(false);
    expect(await readdir(join(dir, 'refused')).catch(() => [])).toEqual([]);
    // An entry on disk that grew past the limit is not read.
    await mkdir(join(dir, 'refused', key(5)), { recursive: true });
    await writeFile(join(dir, 'refused', key(5), 'root.json'), Buffer.alloc(100));
    expect(await cache.read(key(5))).toBeUndefined();
    expect(await cache.read('not-a-key')).toBeUndefined();
    await mkdir(join(dir, 'refused', key(6)), { recursive: true });
    expect(await cache.read(key(6))).toBeUndefined();
  });

  it('retains only the keys given, and removes what an interrupted write left', async () => {
    const cache = new TufMetadataCache({ dir: join(dir, 'pruned') });
    await cache.write(key(1), entry(1));
    await cache.write(key(2), entry(1));
    await mkdir(join(dir, 'pruned', '.write-0123'), { recursive: true });
    await mkdir(join(dir, 'pruned', 'remote'), { recursive: true });
    await cache.retain([key(2)]);
    expect((await readdir(join(dir, 'pruned'))).sort()).toEqual([key(2), 'remote']);
    // A directory that does not exist (yet) is fine.
    await new TufMetadataCache({ dir: join(dir, 'absent') }).retain([]);
  });

  it('reports a directory it cannot write to as not kept, without throwing', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'not a directory');
    expect(await new TufMetadataCache({ dir: file }).write(key(1), entry(1))).toBe(false);
    expect(await new TufMetadataCache({ dir: join(file, 'below') }).write(key(1), entry(1))).toBe(false);
  });

  it('names files: metadata and targets, nothing that climbs out', () => {
    expect(isCacheFilePath('root.json')).toBe(true);
    expect(isCacheFilePath('registry.npmjs.org.json')).toBe(true);
    expect(isCacheFilePath('targets/trusted_root.json')).toBe(true);
    expect(isCacheFilePath('targets/a%2Fb.json')).toBe(true);
    expect(isCacheFilePath('../root.json')).toBe(false);
    expect(isCacheFilePath('targets/..')).toBe(false);
    expect(isCacheFilePath('.')).toBe(false);
    expect(isCacheFilePath('a/b')).toBe(false);
    expect(isCacheFilePath('/etc/passwd')).toBe(false);
  });
});
