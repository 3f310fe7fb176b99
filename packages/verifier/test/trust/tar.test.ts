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
  it('returns regular files by normalized path, skipping directories', () => {
    const read = readTarGz(tarGz(files({ './a/b.json': 'x', '/c': '' }), { directories: ['a/'] }));
    expect([...read.keys()]).toEqual(['a/b.json', 'c']);
    expect(read.get('a/b.json')?.toString()).toBe('x');
  });

  it('reads PAX and GNU long names', () => {
    expect([...readTarGz(tarGz(files({ [LONG]: 'p' }), { longNames: 'pax' })).keys()]).toEqual([LONG]);
    expect([...readTarGz(tarGz(files({ [LONG]: 'g' }), { longNames: 'gnu' })).keys()]).toEqual([LONG]);
  });

  it('reads the USTAR prefix field', () => {
    const archive = tarGz(files({ 'name.json': 'z' }));
    const tar = Buffer.from(gunzipSync(archive));
    tar.write('prefix/dir', 345);
    expect([...readTarGz(gzipSync(resum(tar))).keys()]).toEqual(['prefix/dir/name.json']);
  });

  it('refuses paths that climb out, bad checksums, bad numbers, truncation, bad PAX and too many files', () => {
    expect(() => readTarGz(tarGz(files({ '../etc/passwd': 'x' })))).toThrow('climbs out of the archive');
    const tar = () => Buffer.from(gunzipSync(tarGz(files({ 'a.json': 'x'.repeat(10) }))));
    const badSum = tar();
    badSum[0] = 0x62;
    expect(() => readTarGz(gzipSync(badSum))).toThrow('tar header checksum mismatch');
    const truncated = tar().subarray(0, 515);
    expect(() => readTarGz(gzipSync(truncated))).toThrow('tar entry runs past the end of the archive');
    const badSize = tar();
    badSize.write('zzzzzzzzzzz\0', 124);
    expect(() => readTarGz(gzipSync(resum(badSize)))).toThrow('tar header has a non-octal number');
    const pax = Buffer.from(gunzipSync(tarGz(files({ [LONG]: 'p' }), { longNames: 'pax' })));
    pax.write('x', 512);
    expect(() => readTarGz(gzipSync(pax))).toThrow('malformed PAX header');
    expect(() => readTarGz(tarGz(files({ a: '1', b: '2', c: '3' })), { maxFiles: 2 })).toThrow(
      'more than 2 files',
    );
    expect(() => readTarGz(tarGz(files({ a: 'x'.repeat(4096) })), { maxBytes: 1024 })).toThrow();
  });

  it('reads old-style headers: full-width names, no magic, empty numbers', () => {
    const hundred = `${'n'.repeat(95)}.json`;
    expect([...readTarGz(tarGz(files({ [hundred]: 'x' }))).keys()]).toEqual([hundred]);
    const v7 = Buffer.from(gunzipSync(tarGz(files({ 'name.json': 'z' }))));
    v7.fill(0, 257, 265);
    v7.write('ignored', 345);
    expect([...readTarGz(gzipSync(resum(v7))).keys()]).toEqual(['name.json']);
    const empty = Buffer.from(gunzipSync(tarGz(files({ 'empty.json': '' }))));
    empty.fill(0, 124, 136);
    expect(readTarGz(gzipSync(resum(empty))).get('empty.json')?.length).toBe(0);
  });

  it('ignores other entry types', () => {
    const archive = Buffer.from(gunzipSync(tarGz(files({ link: '', 'b.json': 'q' }))));
    archive.write('2', 156);
    expect([...readTarGz(gzipSync(resum(archive))).keys()]).toEqual(['b.json']);
  });
});
