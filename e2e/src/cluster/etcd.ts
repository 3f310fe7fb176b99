import { join } from 'node:path';
import { freePort, type ManagedProcess, type ProcessGroup } from '@signet/testbed';

export interface EtcdOptions {
  readonly group: ProcessGroup;
  readonly binary: string;
  readonly env: NodeJS.ProcessEnv;
  readonly readyTimeoutMs?: number;
}

export interface RunningEtcd {
  /** `http://127.0.0.1:PORT`, for `--etcd-servers`. */
  readonly url: string;
  readonly process: ManagedProcess;
}

/** A single-member etcd on loopback with its data in the run directory; ready when `/health` answers 200. */
export async function startEtcd(options: EtcdOptions): Promise<RunningEtcd> {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${clientPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const name = 'signet-e2e';
  const process = await options.group.start({
    name: 'etcd',
    command: options.binary,
    args: [
      `--name=${name}`,
      `--data-dir=${join(options.group.runDir, 'etcd-data')}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=${name}=${peerUrl}`,
      // The data is thrown away after the run: fsync buys nothing and costs seconds on slow disks.
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ],
    env: options.env,
    ready: { kind: 'http', url: `${url}/health` },
    readyTimeoutMs: options.readyTimeoutMs ?? 30_000,
  });
  return { url, process };
}
