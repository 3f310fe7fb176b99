// An HTTPS load generator over kept-alive TLS connections, with `concurrency` clients.
// - Closed loop (no `ratePerSecond`): each client posts the next review as soon as the previous
//   answer arrived, so the server runs flat out; latency then is mostly queueing (about
//   concurrency / throughput).
// - Paced (`ratePerSecond`): review i is due at start + i / rate, the next free client sends it, and
//   when no client was free in time its latency counts from when it was due, so a stall shows in the
//   reviews queued behind it too (no coordinated omission).
// Latency is measured on the client, to the last byte of the answer.
import { type Agent, request } from 'node:https';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface LoadOptions {
  /** Keep-alive agent with the test CA; shared by the phases so connections are reused. */
  readonly agent: Agent;
  readonly url: URL;
  /** Serialized AdmissionReviews, posted in turn. */
  readonly bodies: readonly Buffer[];
  readonly concurrency: number;
  /** Reviews to send; fewer when `maxMs` runs out first. */
  readonly count: number;
  readonly maxMs: number;
  /** Offered load; absent: as fast as the server answers. */
  readonly ratePerSecond?: number;
  /** Whether an answer is the expected one: a server that answers wrongly must not look fast. */
  readonly accept: (status: number, body: string) => boolean;
}

export interface LoadResult {
  readonly completed: number;
  readonly failed: number;
  readonly firstFailure: string | undefined;
  readonly seconds: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** CPU time this (client) process used, in cores: 1.0 is one core busy for the whole phase. */
  readonly clientCores: number;
  /** Longest stall of this (client) process's event loop, ms: a client stall shows as latency too. */
  readonly clientStallMs: number;
}

/** The histogram records the whole interval between its timer's runs: a stall is what exceeds it. */
export const LOOP_RESOLUTION_MS = 10;

interface Answer {
  readonly status: number;
  readonly body: string;
}

function post(agent: Agent, url: URL, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Waits until `due`; returns the time the request's latency counts from. Late because every client
 * was busy: from when it was due. Late because our own timer fired late: that is the client's delay,
 * not the server's, so from now.
 */
async function sendTime(due: number): Promise<number> {
  const early = due - performance.now();
  if (early <= 0) return due;
  await new Promise((resolve) => setTimeout(resolve, early));
  return performance.now();
}

/** The q-quantile (nearest rank) of sorted samples. */
function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const latencies = new Float64Array(options.count);
  let issued = 0;
  let completed = 0;
  let failed = 0;
  let firstFailure: string | undefined;
  const cpuBefore = process.cpuUsage();
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loopDelay.enable();
  const started = performance.now();
  const stopAt = started + options.maxMs;

  const dueAt = (index: number) =>
    options.ratePerSecond === undefined
      ? performance.now()
      : started + (index * 1000) / options.ratePerSecond;
  const client = async () => {
    while (issued < options.count && performance.now() < stopAt) {
      const index = issued++;
      const sent = await sendTime(dueAt(index));
      try {
        const answer = await post(
          options.agent,
          options.url,
          options.bodies[index % options.bodies.length] as Buffer,
        );
        if (!options.accept(answer.status, answer.body)) throw new Error(`${answer.status} ${answer.body}`);
        latencies[completed++] = performance.now() - sent;
      } catch (error) {
        failed++;
        firstFailure ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, client));

  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  loopDelay.disable();
  const sorted = latencies.slice(0, completed).sort();
  return {
    completed,
    failed,
    firstFailure,
    seconds,
    perSecond: completed / seconds,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    maxMs: quantile(sorted, 1),
    clientCores: (cpu.user + cpu.system) / 1e6 / seconds,
    clientStallMs: Math.max(0, loopDelay.max / 1e6 - LOOP_RESOLUTION_MS),
  };
}
