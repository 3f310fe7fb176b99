/** A file to put in a tar archive. */
export interface TarEntry {
  readonly name: string;
  readonly content: Uint8Array;
}

const BLOCK = 512;

function writeField(header: Buffer, offset: number, length: number, value: string): void {
  header.write(value.slice(0, length), offset, length, 'ascii');
}

function octal(value: number, length: number): string {
  // Octal digits, zero-padded, NUL-terminated: the ustar numeric field format.
  return `${value.toString(8).padStart(length - 1, '0')}\0`;
}

function headerFor(entry: TarEntry): Buffer {
  const header = Buffer.alloc(BLOCK);
  writeField(header, 0, 100, entry.name);
  writeField(header, 100, 8, octal(0o644, 8));
  writeField(header, 108, 8, octal(0, 8));
  writeField(header, 116, 8, octal(0, 8));
  writeField(header, 124, 12, octal(entry.content.length, 12));
  writeField(header, 136, 12, octal(0, 12));
  writeField(header, 148, 8, '        ');
  writeField(header, 156, 1, '0');
  writeField(header, 257, 6, 'ustar\0');
  writeField(header, 263, 2, '00');
  let sum = 0;
  for (const byte of header) sum += byte;
  writeField(header, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return header;
}

/** An uncompressed ustar archive of regular files (enough for a one-file image layer). */
export function tarArchive(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    parts.push(headerFor(entry), Buffer.from(entry.content));
    const padding = (BLOCK - (entry.content.length % BLOCK)) % BLOCK;
    parts.push(Buffer.alloc(padding));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}
