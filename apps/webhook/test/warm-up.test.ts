// The warm-up part: once Signet is ready (and a moment later), one request to its own /healthz
// through the registry client's HTTP path, nothing before ready, nothing after a stop. A real
// HTTP server on loopback stands for the operations port and counts what it is asked.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { healthzUrl, WarmUp } from '../src/warm-up.js';

const logger = createLogger({ level: 'silent' });
let server: Server | undefined;

afterEach(async () => {
  server?.close();
  server = undefined;
});

async function opsPort(): Promise<{ url: URL; requests: string[] }> {
  const requests: string[] = [];
  server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.end('ok');
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: healthzUrl('0.0.0.0', (server.address() as AddressInfo).port), requests };
}

const until = async (what: () => boolean, ms = 5000) => {
  const deadline = Date.now() + ms;
  while (!what() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
};

describe('WarmUp', () => {
  it('asks /healthz once through the registry HTTP path, only after ready and its delay', async () => {
    const { url, requests } = await opsPort();
    let ready = false;
    const warmUp = new WarmUp({ ready: () => ready, healthz: () => url, logger, delayMs: 200 });
    warmUp.start();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(requests).toEqual([]);
    ready = true;
    const readyAt = Date.now();
    await until(() => requests.length > 0);
    expect(requests).toEqual(['GET /healthz']);
    expect(Date.now() - readyAt).toBeGreaterThanOrEqual(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(requests).toHaveLength(1);
    warmUp.stop();
  });

  it('does nothing once stopped', async () => {
    const { url, requests } = await opsPort();
    const warmUp = new WarmUp({ ready: () => true, healthz: () => url, logger, delayMs: 100 });
    warmUp.start();
    warmUp.stop();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(requests).toEqual([]);
  });

  it('finds the operations port over loopback when it listens on every address', () => {
    expect(healthzUrl('0.0.0.0', 8080).href).toBe('http://127.0.0.1:8080/healthz');
    expect(healthzUrl('::', 8080).href).toBe('http://127.0.0.1:8080/healthz');
    expect(healthzUrl('10.1.2.3', 8080).href).toBe('http://10.1.2.3:8080/healthz');
    expect(healthzUrl('fd00::1', 8080).href).toBe('http://[fd00::1]:8080/healthz');
  });
});
