// Sigstore's RFC 3161 timestamp authority on loopback, signing with an in-memory key and chain
// (root, intermediate, leaf with the timestamping EKU) made fresh each run.
import { TestbedError } from '../errors.js';
import type { ToolProgress } from '../go-build.js';
import { freePort, type ManagedProcess, type ProcessGroup } from '../process.js';
import { ensureTools } from '../tools.js';

export interface StartTimestampAuthorityOptions {
  readonly group: ProcessGroup;
  readonly onProgress?: (event: ToolProgress) => void;
  readonly readyTimeoutMs?: number;
}

export interface TimestampAuthority {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** Where clients ask for timestamps: `<url>/api/v1/timestamp`. */
  readonly timestampUrl: string;
  /** Its chain, leaf first (PEM each), from `/api/v1/timestamp/certchain`. */
  readonly chainPem: readonly string[];
  readonly process: ManagedProcess;
  stop(): Promise<void>;
}

export async function startTimestampAuthority(
  options: StartTimestampAuthorityOptions,
): Promise<TimestampAuthority> {
  const toolOptions = options.onProgress ? { onProgress: options.onProgress } : {};
  const { 'timestamp-authority': binary } = await ensureTools(['timestamp-authority'], toolOptions);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const managed = await options.group.start({
    name: `timestamp-authority-${port}`,
    command: binary,
    args: ['--host', '127.0.0.1', '--port', String(port), '--timestamp-signer', 'memory'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: options.group.runDir },
    ready: { kind: 'http', url: `${url}/ping` },
    readyTimeoutMs: options.readyTimeoutMs ?? 30_000,
  });
  const response = await fetch(`${url}/api/v1/timestamp/certchain`, { signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  const chainPem = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g) ?? [];
  if (!response.ok || chainPem.length === 0) {
    throw new TestbedError(
      'COMMAND_FAILED',
      `the timestamp authority at ${url} served no chain: ${text.slice(0, 200)}`,
    );
  }
  return {
    url,
    timestampUrl: `${url}/api/v1/timestamp`,
    chainPem,
    process: managed,
    stop: async () => {
      await managed.stop();
    },
  };
}
