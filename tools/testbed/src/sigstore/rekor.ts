// Rekor v2 (rekor-tiles) on loopback with its POSIX backend: the log's tiles and checkpoints in a
// directory of the run, an ECDSA P-256 key made here signing its checkpoints. No database, Redis
// or Trillian: Rekor v1 needs them, Rekor v2 does not.
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ToolProgress } from '../go-build.js';
import { freePort, type ManagedProcess, type ProcessGroup } from '../process.js';
import { ensureTools } from '../tools.js';

export interface StartRekorOptions {
  readonly group: ProcessGroup;
  readonly onProgress?: (event: ToolProgress) => void;
  readonly readyTimeoutMs?: number;
}

export interface Rekor {
  /** `http://127.0.0.1:PORT`: its HTTP API (`/api/v2/log/entries`) and the checkpoints' origin. */
  readonly url: string;
  /** PEM public key that signs its checkpoints. */
  readonly publicKeyPem: string;
  /** Its `tlogs[]` entry in a TrustedRoot (log ID and checkpoint key ID: SHA-256 of the DER key, as Rekor v2 computes them for ECDSA). */
  readonly trustedRootEntry: Record<string, unknown>;
  readonly process: ManagedProcess;
  stop(): Promise<void>;
}

export async function startRekor(options: StartRekorOptions): Promise<Rekor> {
  const toolOptions = options.onProgress ? { onProgress: options.onProgress } : {};
  const { 'rekor-server': binary } = await ensureTools(['rekor-server'], toolOptions);
  const [port, grpcPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const dir = join(options.group.runDir, `rekor-${port}`);
  await mkdir(join(dir, 'log'), { recursive: true });
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const keyFile = join(dir, 'signer.pem');
  await writeFile(keyFile, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
  const host = `127.0.0.1:${port}`;
  const managed = await options.group.start({
    name: `rekor-${port}`,
    command: binary,
    args: [
      'serve',
      // The checkpoint origin: verifiers name a log's notes by its URL's host name, without the port.
      ...['--storage-dir', join(dir, 'log'), '--signer-filepath', keyFile, '--hostname', '127.0.0.1'],
      ...['--http-address', '127.0.0.1', '--http-port', String(port)],
      ...['--grpc-address', '127.0.0.1', '--grpc-port', String(grpcPort)],
      ...['--http-metrics-port', String(metricsPort), '--checkpoint-interval', '1s'],
    ],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: options.group.runDir },
    ready: { kind: 'log', pattern: /starting HTTP proxy/ },
    readyTimeoutMs: options.readyTimeoutMs ?? 30_000,
  });
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  const keyId = createHash('sha256').update(spki).digest('base64');
  const url = `http://${host}`;
  return {
    url,
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    trustedRootEntry: {
      baseUrl: url,
      hashAlgorithm: 'SHA2_256',
      publicKey: {
        rawBytes: spki.toString('base64'),
        keyDetails: 'PKIX_ECDSA_P256_SHA_256',
        validFor: { start: new Date(Date.now() - 60_000).toISOString() },
      },
      logId: { keyId },
      checkpointKeyId: { keyId },
    },
    process: managed,
    stop: async () => {
      await managed.stop();
    },
  };
}
