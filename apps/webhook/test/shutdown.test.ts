// Signet restarting must never make the API server fail a review (with failurePolicy Fail that
// denies the write, the failure Signet exists to prevent). Two real `signet serve` processes stand
// behind a loopback TCP balancer that, like a Service, routes new connections to the replicas whose
// /readyz said ready at its last poll (every 200 ms: endpoints update late). A client sends reviews
// without pause, over kept-alive connections, while each replica in turn gets SIGTERM and is
// replaced. Every review must be answered.
import { writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type * as Testbed from '@signet/testbed';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createCertificateAuthority,
  type IssuedCertificate,
  issueServingCertificate,
} from '../src/certificates.js';
import { reviewFixture } from './helpers.js';

let testbed: typeof Testbed;
let group: Testbed.ProcessGroup;
let runDir = '';
let ca: IssuedCertificate;
let balancer: Server;
let balancerPort = 0;
const backends = new Map<string, { port: number; opsPort: number; ready: boolean }>();

async function startReplica(name: string): Promise<Testbed.ManagedProcess> {
  const [port, opsPort] = [await testbed.freePort(), await testbed.freePort()];
  const cli = new URL('../dist/bin/signet.js', import.meta.url).pathname;
  const proc = await group.start({
    name,
    command: process.execPath,
    args: [
      cli,
      'serve',
      `--port=${port}`,
      `--ops-port=${opsPort}`,
      '--host=127.0.0.1',
      `--policy-file=${join(runDir, 'policy.yaml')}`,
      `--tls-cert-file=${join(runDir, 'tls.crt')}`,
      `--tls-key-file=${join(runDir, 'tls.key')}`,
      // longer than the balancer's 200 ms poll, as the chart's drain is longer than endpoint updates
      '--shutdown-drain=1s',
      '--log-level=warn',
    ],
    env: { PATH: process.env.PATH ?? '' },
    ready: { kind: 'http', url: `http://127.0.0.1:${opsPort}/readyz` },
    readyTimeoutMs: 30_000,
  });
  backends.set(name, { port, opsPort, ready: true });
  return proc;
}

async function pollReadiness(): Promise<void> {
  await Promise.all(
    [...backends].map(async ([name, backend]) => {
      try {
        const answer = await fetch(`http://127.0.0.1:${backend.opsPort}/readyz`, {
          signal: AbortSignal.timeout(150),
        });
        backend.ready = answer.status === 200;
      } catch {
        backend.ready = false;
        backends.delete(name);
      }
    }),
  );
}

let poller: NodeJS.Timeout | undefined;
let turn = 0;

beforeAll(async () => {
  testbed = await import('@signet/testbed');
  runDir = await testbed.createRunDir('signet-shutdown-');
  group = new testbed.ProcessGroup({ runDir, graceMs: 5000 });
  ca = await createCertificateAuthority('signet-shutdown', 1);
  const serving = await issueServingCertificate(ca, ['127.0.0.1'], 1);
  await writeFile(join(runDir, 'tls.crt'), serving.cert);
  await writeFile(join(runDir, 'tls.key'), serving.key);
  await writeFile(
    join(runDir, 'policy.yaml'),
    'apiVersion: policy.sigstore.dev/v1beta1\nkind: ClusterImagePolicy\nmetadata: {name: all}\nspec:\n  images: [{glob: "**"}]\n  authorities: [{static: {action: pass}}]\n',
  );
  balancer = createServer((client: Socket) => {
    const ready = [...backends.values()].filter((b) => b.ready);
    const backend = ready[turn++ % Math.max(1, ready.length)];
    if (backend === undefined) return client.destroy();
    const upstream = connect(backend.port, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => balancer.once('listening', resolve));
  balancerPort = (balancer.address() as { port: number }).port;
  poller = setInterval(() => void pollReadiness(), 200);
}, 60_000);

afterAll(async () => {
  clearInterval(poller);
  balancer?.close();
  await group?.stopAll();
});

function review(agent: Agent, body: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: balancerPort,
        path: '/validate?timeout=10s',
        method: 'POST',
        ca: ca.cert,
        agent,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.setHeader('content-type', 'application/json');
    req.on('error', () => resolve(-1));
    req.end(body);
  });
}

it('answers every review while each replica in turn is terminated and replaced', async () => {
  const a = await startReplica('signet-a');
  const b = await startReplica('signet-b');
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const body = reviewFixture('replicaset-scale-down.json');
  const statuses: number[] = [];
  let sending = true;
  const clients = Array.from({ length: 4 }, async () => {
    while (sending) statuses.push(await review(agent, body));
  });
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  await pause(500);
  // As a Deployment rolls: a new replica becomes ready, then an old one is terminated.
  await startReplica('signet-c');
  const exitA = await a.stop(10_000);
  await startReplica('signet-d');
  const exitB = await b.stop(10_000);
  await pause(500);
  sending = false;
  await Promise.all(clients);
  agent.destroy();
  expect([exitA?.code, exitB?.code]).toEqual([0, 0]);
  const counts = {
    answered: statuses.filter((s) => s === 200).length,
    failed: statuses.filter((s) => s !== 200).length,
  };
  expect(counts.failed).toBe(0);
  expect(counts.answered).toBeGreaterThan(50);
}, 120_000);
