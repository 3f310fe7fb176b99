// Signet's calls to a real kube-apiserver share kept-alive connections: client-node 2.0.1 makes a
// new undici dispatcher (a new TLS context, TCP and TLS connection) for every call, and Signet's
// KubeConfig hands its calls one dispatcher while the TLS material stays the same. A loopback TCP
// proxy in front of the API server counts the connections (TLS passes through it untouched).
import { readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { openKubeApi } from '@signet/webhook';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type LocalCluster, startLocalCluster } from '../src/cluster/local-cluster.ts';

let cluster: LocalCluster;
let proxy: Server;
let connections = 0;
let kubeconfig = '';

beforeAll(async () => {
  cluster = await startLocalCluster({ onProgress: () => {} });
  const upstream = new URL(cluster.apiServerUrl);
  proxy = createServer((socket) => {
    connections++;
    const target = connect(Number(upstream.port), upstream.hostname);
    socket.pipe(target).pipe(socket);
    socket.on('error', () => target.destroy());
    target.on('error', () => socket.destroy());
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => proxy.once('listening', resolve));
  const config = parse(await readFile(cluster.kubeconfig, 'utf8'));
  for (const entry of config.clusters)
    entry.cluster.server = `https://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  kubeconfig = join(cluster.runDir, 'through-proxy.kubeconfig');
  await writeFile(kubeconfig, stringify(config), { mode: 0o600 });
}, 120_000);

afterAll(async () => {
  proxy?.close();
  await cluster?.stop();
});

describe('calls to the API server', () => {
  it('reuse one connection, one after another and at once', async () => {
    const api = openKubeApi({ kubeconfig });
    const before = connections;
    for (let i = 0; i < 4; i++) {
      await api.core.readNamespace({ name: 'default' }, api.deadline(10_000));
      await api.coordination.listNamespacedLease({ namespace: 'default' }, api.deadline(10_000));
    }
    await Promise.all(
      Array.from({ length: 4 }, () => api.core.listNamespace({ limit: 1 }, api.deadline(10_000))),
    );
    // Before: one connection per call, 12.
    expect(connections - before).toBe(1);
  });
});
