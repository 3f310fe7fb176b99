// Issue 21, finding 8: a 4.1 MB AdmissionReview of 1.38 million empty JSON objects costs 0.45-1.7 s
// of `JSON.parse`; parsed on the event loop, three attackers sending it pushed a scale-down to
// 8.5 s. Bodies that large are checked in a worker thread, so the event loop that answers the
// cheap decisions never runs such a parse.
//
// A real `signet serve` (the built CLI, the chart's Node flags) is attacked by a separate process,
// while this one sends scale-downs. Measured from inside the server process, against what one
// parse of that body costs a process with the same flags on this machine, now:
// - the CPU time of its main thread (the one running the event loop) per attack body, from /proc:
//   independent of how busy the shared machine is;
// - its event loop's own delay metric (the 99th percentile, reset by each scrape): a body's parse
//   on the event loop shows there as a stall of at least that parse.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type * as Testbed from '@signet/testbed';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cpuSecondsOf } from '../../bench/proc-stats.js';
import { createCertificateAuthority, issueServingCertificate } from '../../src/certificates.js';
import { reviewFixture } from '../helpers.js';

const FLOOD_CLIENT = fileURLToPath(new URL('../../soak/flood-client.ts', import.meta.url));
const CLI = fileURLToPath(new URL('../../dist/bin/signet.js', import.meta.url));
const CHART_NODE_FLAGS = ['--max-old-space-size=256', '--max-semi-space-size=8'];
const BODY_BYTES = 4_100_000;
const run = promisify(execFile);

let testbed: typeof Testbed;
let group: Testbed.ProcessGroup;
let runDir = '';
let ca = '';
let port = 0;
let opsPort = 0;
let pid = 0;

beforeAll(async () => {
  testbed = await import('@signet/testbed');
  runDir = await testbed.createRunDir('signet-heavy-bodies-');
  group = new testbed.ProcessGroup({ runDir, graceMs: 5000 });
  const authority = await createCertificateAuthority('signet-heavy-bodies', 1);
  const serving = await issueServingCertificate(authority, ['127.0.0.1'], 1);
  ca = authority.cert;
  await writeFile(join(runDir, 'ca.crt'), ca);
  await writeFile(join(runDir, 'tls.crt'), serving.cert);
  await writeFile(join(runDir, 'tls.key'), serving.key);
  await writeFile(
    join(runDir, 'policy.yaml'),
    'apiVersion: policy.sigstore.dev/v1beta1\nkind: ClusterImagePolicy\nmetadata: {name: all}\nspec:\n  images: [{glob: "attack.invalid/**"}]\n  authorities: [{static: {action: pass}}]\n',
  );
  [port, opsPort] = [await testbed.freePort(), await testbed.freePort()];
  const server = await group.start({
    name: 'signet',
    command: process.execPath,
    args: [
      ...CHART_NODE_FLAGS,
      CLI,
      'serve',
      `--port=${port}`,
      `--ops-port=${opsPort}`,
      '--host=127.0.0.1',
      `--policy-file=${join(runDir, 'policy.yaml')}`,
      `--tls-cert-file=${join(runDir, 'tls.crt')}`,
      `--tls-key-file=${join(runDir, 'tls.key')}`,
      '--log-level=error',
    ],
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production' },
    ready: { kind: 'http', url: `http://127.0.0.1:${opsPort}/readyz` },
    readyTimeoutMs: 30_000,
  });
  pid = server.pid;
}, 60_000);

afterAll(async () => {
  await group?.stopAll();
});

/** The server's event-loop delay since the last scrape (its 99th percentile and maximum), ms. */
async function serverLoopDelayMs(): Promise<{ p99: number; max: number }> {
  const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
  const value = (name: string) =>
    Number(
      text
        .split('\n')
        .find((l) => l.startsWith(`signet_nodejs_eventloop_lag_${name}_seconds `))
        ?.split(' ')[1],
    ) * 1000;
  return { p99: value('p99'), max: value('max') };
}

/**
 * What one `JSON.parse` of the attack body costs a process with the server's flags, the better of
 * two: its CPU time and its wall time, ms.
 */
async function parseCost(): Promise<{ cpu: number; wall: number }> {
  const script = `const head = '{"request":{"object":{"spec":{"x":[';
const text = head + Array(Math.floor((${BODY_BYTES} - head.length) / 3)).fill('{}').join(',') + ']}}}}';
const cost = { cpu: Infinity, wall: Infinity };
for (let i = 0; i < 2; i++) {
  const [cpu, wall] = [process.cpuUsage(), performance.now()];
  JSON.parse(text);
  const used = process.cpuUsage(cpu);
  cost.cpu = Math.min(cost.cpu, (used.user + used.system) / 1000);
  cost.wall = Math.min(cost.wall, performance.now() - wall);
}
process.stdout.write(JSON.stringify(cost));`;
  const { stdout } = await run(process.execPath, [...CHART_NODE_FLAGS, '-e', script]);
  return JSON.parse(stdout) as { cpu: number; wall: number };
}

function scaleDown(agent: Agent): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/validate?timeout=10s', method: 'POST', ca, agent },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(-1));
    req.end(reviewFixture('replicaset-scale-down.json'));
  });
}

it('three connections sending 4.1 MB of empty objects never stall the event loop for a parse of one', async () => {
  const parse = await parseCost();
  const attack = run(
    process.execPath,
    [FLOOD_CLIENT, 'objects', String(port), join(runDir, 'ca.crt'), '3', String(BODY_BYTES), '6'],
    { timeout: 60_000 },
  );
  // Let the first bodies arrive, then start the measurement (a scrape resets it).
  await new Promise((resolve) => setTimeout(resolve, 500));
  await serverLoopDelayMs();
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const probes: number[] = [];
  let attacking = true;
  void attack.finally(() => {
    attacking = false;
  });
  const mainThreadBefore = await cpuSecondsOf(pid, pid);
  while (attacking) probes.push(await scaleDown(agent));
  const mainThreadMs = ((await cpuSecondsOf(pid, pid)) - mainThreadBefore) * 1000;
  const delay = await serverLoopDelayMs();
  agent.destroy();
  const { stdout } = await attack;
  const statuses = (JSON.parse(stdout) as { statuses: Record<string, number> }).statuses;
  const bodies = Object.values(statuses).reduce((sum, n) => sum + n, 0);
  const perBodyMs = mainThreadMs / Math.max(1, bodies);
  console.log(
    `objects: one parse costs ${parse.cpu.toFixed(0)} ms of CPU (${parse.wall.toFixed(0)} ms); the server's ` +
      `event loop spent ${perBodyMs.toFixed(1)} ms of CPU per attack body (${bodies}), its delay ` +
      `p99 ${delay.p99.toFixed(0)} ms, max ${delay.max.toFixed(0)} ms; ${probes.length} scale-downs; ` +
      `attack answers ${JSON.stringify(statuses)}`,
  );
  expect(probes.every((status) => status === 200)).toBe(true);
  // Receiving and decrypting 4.1 MB costs the event loop a few ms; parsing it, hundreds.
  expect(perBodyMs).toBeLessThan(parse.cpu / 10);
  expect(delay.p99).toBeLessThan(parse.wall);
  // The attack bodies are refused (too many JSON values to parse on the event loop), never admitted.
  expect(Object.keys(statuses)).toEqual(['413']);
}, 90_000);
