import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { readTarGz } from '../../src/trust/tar.js';
import { tarGz } from '../support/tuf.js';

const files = (entries: Record<string, string>) =>
  new Map(Object.entries(entries).map(([k, v]) => [k, Buffer.from(v)]));
const LONG = `repository/${'deep/'.repeat(30)}file.json`;

/** Recomputes the first header's checksum after a test edited it. */
function resum(tar: Buffer): Buffer {
  tar.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of tar.subarray(0, 512)) sum += byte;
  tar.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return tar;
}

describe('reading a gzipped tar', () => {
  it('returns regular files by normalized path, skipping directories', async () => {
    const read = await readTarGz(tarGz(files({ './a/b.json': 'x', '/c': '' }), { directories: ['a/'] }));
    expect([...read.keys()]).toEqual(['a/b.json', 'c']);
    expect(read.get('a/b.json')?.toString()).toBe('x');
  });

  it('reads PAX and GNU long names', async () => {
    expect([...(await readTarGz(tarGz(files({ [LONG]: 'p' }), { longNames: 'pax' }))).keys()]).toEqual([
      LONG,
    ]);
    expect([...(await readTarGz(tarGz(files({ [LONG]: 'g' }), { longNames: 'gnu' }))).keys()]).toEqual([
      LONG,
    ]);
  });

  it('reads the USTAR prefix field', async () => {
    const archive = tarGz(files({ 'name.json': 'z' }));
    const tar = Buffer.from(gunzipSync(archive));
    tar.write('prefix/dir', 345);
    expect([...(await readTarGz(gzipSync(resum(tar)))).keys()]).toEqual(['prefix/dir/name.json']);
  });

  it('refuses paths that climb out, bad checksums, bad numbers, truncation, bad PAX and too many files', async () => {
    await expect(readTarGz(tarGz(files({ '../etc/passwd': 'x' })))).rejects.toThrow(
      'climbs out of the archive',
    );
    const tar = () => Buffer.from(gunzipSync(tarGz(files({ 'a.json': 'x'.repeat(10) }))));
    const badSum = tar();
    badSum[0] = 0x62;
    await expect(readTarGz(gzipSync(badSum))).rejects.toThrow('tar header checksum mismatch');
    const truncated = tar().subarray(0, 515);
    await expect(readTarGz(gzipSync(truncated))).rejects.toThrow(
      'tar entry runs past the end of the archive',
    );
    const badSize = tar();
    badSize.write('zzzzzzzzzzz\0', 124);
    await expect(readTarGz(gzipSync(resum(badSize)))).rejects.toThrow('tar header has a non-octal number');
    const pax = Buffer.from(gunzipSync(tarGz(files({ [LONG]: 'p' }), { longNames: 'pax' })));
    pax.write('x', 512);
    await expect(readTarGz(gzipSync(pax))).rejects.toThrow('malformed PAX header');
    await expect(readTarGz(tarGz(files({ a: '1', b: '2', c: '3' })), { maxFiles: 2 })).rejects.toThrow(
      'more than 2 files',
    );
    await expect(readTarGz(tarGz(files({ a: 'x'.repeat(4096) })), { maxBytes: 1024 })).rejects.toThrow();
  });

  it('reads old-style headers: full-width names, no magic, empty numbers', async () => {
    const hundred = `${'n'.repeat(95)}.json`;
    expect([...(await readTarGz(tarGz(files({ [hundred]: 'x' })))).keys()]).toEqual([hundred]);
    const v7 = Buffer.from(gunzipSync(tarGz(files({ 'name.json': 'z' }))));
    v7.fill(0, 257, 265);
    v7.write('ignored', 345);
    expect([...(await readTarGz(gzipSync(resum(v7)))).keys()]).toEqual(['name.json']);
    const empty = Buffer.from(gunzipSync(tarGz(files({ 'empty.json': '' }))));
    empty.fill(0, 124, 136);
    expect((await readTarGz(gzipSync(resum(empty)))).get('empty.json')?.length).toBe(0);
  });

  it('ignores other entry types', async () => {
    const archive = Buffer.from(gunzipSync(tarGz(files({ link: '', 'b.json': 'q' }))));
    archive.write('2', 156);
    expect([...(await readTarGz(gzipSync(resum(archive)))).keys()]).toEqual(['b.json']);
  });

  // Issue 21: a TrustRoot's mirrorFS was unpacked with gunzipSync on the event loop; anyone may
  // send one to /validate-policy, and 3 MB of gzip unpack to the 64 MiB limit.
  it('unpacks off the event loop: what the event loop has to do meanwhile runs before the archive is read', async () => {
    const order: string[] = [];
    const archive = tarGz(files({ 'a.json': 'x'.repeat(8 * 1024 * 1024) }));
    const reading = (async () => {
      await readTarGz(archive);
      order.push('read');
    })();
    setImmediate(() => order.push('event loop'));
    await reading;
    expect(order).toEqual(['event loop', 'read']);
  });
});
