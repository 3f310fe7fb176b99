// A real, signed TUF repository for tests (Ed25519 keys, canonical JSON, as tuf-js verifies it),
// served on loopback or packed as a TrustRoot `mirrorFS` (gzipped tar).
import { createHash, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { json } from '@sigstore/core';

interface TufKey {
  readonly id: string;
  readonly privateKey: KeyObject;
  readonly json: Record<string, unknown>;
}

function tufKey(): TufKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const keyJson = { keytype: 'ed25519', scheme: 'ed25519', keyval: { public: raw.toString('hex') } };
  const id = createHash('sha256').update(json.canonicalize(keyJson)).digest('hex');
  return { id, privateKey, json: keyJson };
}

function signed(body: Record<string, unknown>, keys: readonly TufKey[]): Buffer {
  const bytes = Buffer.from(json.canonicalize(body));
  const signatures = keys.map((key) => ({
    keyid: key.id,
    sig: sign(null, bytes, key.privateKey).toString('hex'),
  }));
  return Buffer.from(JSON.stringify({ signed: body, signatures }));
}

export interface TufRepoOptions {
  readonly expires?: string;
  readonly consistentSnapshot?: boolean;
  /** Add a `2.root.json` signed by the first root key, rotating all roles to new keys. */
  readonly rotateRoot?: boolean;
  /** Sign timestamp, snapshot and targets with a key the root does not list. */
  readonly untrusted?: boolean;
}

export interface TufRepo {
  /** `1.root.json`: the TrustRoot's initial root. */
  readonly root: Buffer;
  /** Files by path under the repository root. */
  readonly files: Map<string, Buffer>;
}

const FAR_FUTURE = '2099-01-01T00:00:00Z';

export function makeTufRepo(
  targets: Readonly<Record<string, Buffer>>,
  options: TufRepoOptions = {},
): TufRepo {
  const expires = options.expires ?? FAR_FUTURE;
  const consistent = options.consistentSnapshot ?? false;
  const first = tufKey();
  const rootBody = (version: number, key: TufKey) => ({
    _type: 'root',
    spec_version: '1.0.31',
    version,
    expires,
    consistent_snapshot: consistent,
    keys: { [key.id]: key.json },
    roles: Object.fromEntries(
      ['root', 'timestamp', 'snapshot', 'targets'].map((role) => [role, { keyids: [key.id], threshold: 1 }]),
    ),
  });
  const root = signed(rootBody(1, first), [first]);
  const files = new Map<string, Buffer>([['1.root.json', root]]);
  let key = first;
  if (options.rotateRoot) {
    const second = tufKey();
    files.set('2.root.json', signed(rootBody(2, second), [first, second]));
    key = second;
  }
  const roleKey = options.untrusted ? tufKey() : key;
  const targetsMeta: Record<string, unknown> = {};
  for (const [name, data] of Object.entries(targets)) {
    const sha256 = createHash('sha256').update(data).digest('hex');
    targetsMeta[name] = { length: data.length, hashes: { sha256 } };
    files.set(consistent ? `targets/${sha256}.${name}` : `targets/${name}`, data);
  }
  const common = { spec_version: '1.0.31', version: 1, expires };
  const targetsFile = signed({ _type: 'targets', ...common, targets: targetsMeta }, [roleKey]);
  const snapshotFile = signed({ _type: 'snapshot', ...common, meta: { 'targets.json': { version: 1 } } }, [
    roleKey,
  ]);
  files.set(consistent ? '1.targets.json' : 'targets.json', targetsFile);
  files.set(consistent ? '1.snapshot.json' : 'snapshot.json', snapshotFile);
  files.set(
    'timestamp.json',
    signed({ _type: 'timestamp', ...common, meta: { 'snapshot.json': { version: 1 } } }, [roleKey]),
  );
  return { root, files };
}

/** Serves `files` on loopback; `requests` records every path asked for. */
export async function serveRepo(
  files: ReadonlyMap<string, Buffer>,
): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    const path = decodeURIComponent((request.url ?? '/').slice(1));
    requests.push(path);
    const data = files.get(path);
    if (data === undefined) {
      response.writeHead(404).end();
    } else {
      response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(data);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

/** A gzipped USTAR archive; names longer than 100 bytes get a PAX (`x`) or GNU (`L`) header. */
export function tarGz(
  files: ReadonlyMap<string, Buffer>,
  options: { readonly longNames?: 'pax' | 'gnu'; readonly directories?: readonly string[] } = {},
): Buffer {
  const blocks: Buffer[] = [];
  for (const directory of options.directories ?? []) blocks.push(header(directory, 0, '5'));
  for (const [name, data] of files) {
    if (Buffer.byteLength(name) > 100) {
      const long =
        options.longNames === 'gnu'
          ? Buffer.from(`${name}\0`)
          : Buffer.concat([paxRecord('mtime', '0'), paxRecord('path', name)]);
      blocks.push(
        header(
          options.longNames === 'gnu' ? '././@LongLink' : 'PaxHeader',
          long.length,
          options.longNames === 'gnu' ? 'L' : 'x',
        ),
        pad(long),
      );
    }
    blocks.push(header(name.slice(0, 100), data.length, '0'), pad(data));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length++;
  return Buffer.from(`${length}${body}`);
}

function header(name: string, size: number, type: string): Buffer {
  const block = Buffer.alloc(512);
  block.write(name, 0, 100, 'utf8');
  block.write('0000644\0', 100);
  block.write('0000000\0', 108);
  block.write('0000000\0', 116);
  block.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  block.write('00000000000\0', 136);
  block.write(type, 156);
  block.write('ustar\0', 257);
  block.write('00', 263);
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return block;
}

function pad(data: Buffer): Buffer {
  const rest = data.length % 512;
  return rest === 0 ? data : Buffer.concat([data, Buffer.alloc(512 - rest)]);
}
