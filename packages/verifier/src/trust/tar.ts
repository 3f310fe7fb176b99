// A small reader for the gzipped tar of a TUF repository (a TrustRoot's `mirrorFS`): regular
// files only, USTAR and PAX/GNU long names, with caps on sizes and counts, and no path that
// climbs out of the archive.
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';

const BLOCK = 512;
const MAX_UNPACKED_BYTES = 64 * 1024 * 1024;
const MAX_FILES = 10_000;
const inflate = promisify(gunzip);

export interface TarLimits {
  readonly maxFiles?: number;
  readonly maxBytes?: number;
}

/**
 * Files of a `.tar.gz` by normalized path (`a/b.json`, no leading `./` or `/`). The archive is
 * unpacked in libuv's thread pool, not on the event loop: a few megabytes of a TrustRoot's
 * `mirrorFS`, which anyone may send to `/validate-policy`, can unpack to the full `maxBytes`.
 */
export async function readTarGz(archive: Uint8Array, limits: TarLimits = {}): Promise<Map<string, Buffer>> {
  return readTar(await inflate(archive, { maxOutputLength: limits.maxBytes ?? MAX_UNPACKED_BYTES }), limits);
}

/** Files of an unpacked tar, as {@link readTarGz}. */
export function readTar(tar: Buffer, limits: TarLimits = {}): Map<string, Buffer> {
  const maxFiles = limits.maxFiles ?? MAX_FILES;
  const files = new Map<string, Buffer>();
  let offset = 0;
  let longName: string | undefined;
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    checkChecksum(header);
    const size = octal(header.subarray(124, 136));
    const type = String.fromCharCode(header.readUInt8(156));
    const start = offset + BLOCK;
    if (start + size > tar.length) throw new Error('tar entry runs past the end of the archive');
    const data = tar.subarray(start, start + size);
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'x') longName = paxPath(data);
    else if (type === 'L') longName = cString(data);
    else if (type === '0' || type === '\0') {
      files.set(normalize(longName ?? ustarName(header)), Buffer.from(data));
      if (files.size > maxFiles) throw new Error(`more than ${maxFiles} files`);
      longName = undefined;
    } else longName = undefined;
  }
  return files;
}

function checkChecksum(header: Buffer): void {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : header.readUInt8(i);
  if (sum !== octal(header.subarray(148, 156))) throw new Error('tar header checksum mismatch');
}

function octal(field: Buffer): number {
  const text = cString(field).trim();
  if (!/^[0-7]*$/.test(text)) throw new Error('tar header has a non-octal number');
  return text === '' ? 0 : Number.parseInt(text, 8);
}

function cString(field: Buffer): string {
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? field.length : end).toString('utf8');
}

function ustarName(header: Buffer): string {
  const name = cString(header.subarray(0, 100));
  const prefix =
    header.subarray(257, 262).toString('latin1') === 'ustar' ? cString(header.subarray(345, 500)) : '';
  return prefix === '' ? name : `${prefix}/${name}`;
}

/** The `path` record of a PAX extended header (`<length> path=<value>\n`). */
function paxPath(data: Buffer): string | undefined {
  let path: string | undefined;
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    const length = Number.parseInt(data.subarray(offset, space).toString('latin1'), 10);
    if (space === -1 || !Number.isSafeInteger(length) || length <= 0) throw new Error('malformed PAX header');
    const record = data.subarray(space + 1, offset + length - 1).toString('utf8');
    if (record.startsWith('path=')) path = record.slice('path='.length);
    offset += length;
  }
  return path;
}

function normalize(path: string): string {
  const parts = path.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) throw new Error(`tar entry ${JSON.stringify(path)} climbs out of the archive`);
  return parts.join('/');
}
