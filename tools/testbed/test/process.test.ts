import { readFile, rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunDir, freePort, httpStatus, ProcessGroup, tcpOpen } from '../src/process.ts';

// Real programs: Node itself, running small scripts.
const node = process.execPath;
const httpServer = (port: number) =>
  `require('node:http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1', () => console.log('serving ${port}'))`;

describe('ProcessGroup', () => {
  let group: ProcessGroup;

  beforeAll(async () => {
    group = new ProcessGroup({ runDir: await createRunDir('signet-process-test-'), graceMs: 1_000 });
  });
  afterAll(async () => {
    await group.stopAll();
    await rm(group.runDir, { recursive: true, force: true });
  });

  it('finds free loopback ports', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    expect(await tcpOpen('127.0.0.1', port, 500)).toBe(false);
  });

  it('starts a program, waits for HTTP 200, logs its output and stops it', async () => {
    const port = await freePort();
    const server = await group.start({
      name: 'http',
      command: node,
      args: ['-e', httpServer(port)],
      ready: { kind: 'http', url: `http://127.0.0.1:${port}/` },
      readyTimeoutMs: 10_000,
    });
    expect(await httpStatus(`http://127.0.0.1:${port}/`, 1_000)).toBe(200);
    expect(await tcpOpen('127.0.0.1', port, 1_000)).toBe(true);
    await expect.poll(() => readFile(server.logPath, 'utf8')).toContain(`serving ${port}`);
    const exit = await server.stop();
    expect(exit?.signal).toBe('SIGTERM');
    expect(server.running).toBe(false);
    expect(await tcpOpen('127.0.0.1', port, 500)).toBe(false);
  });

  it('waits for a log line and keeps the match', async () => {
    const port = await freePort();
    const server = await group.start({
      name: 'log',
      command: node,
      args: ['-e', httpServer(port)],
      ready: { kind: 'log', pattern: /serving (\d+)/ },
    });
    expect(server.readyMatch?.[1]).toBe(String(port));
    await server.stop();
  });

  it('fails with the log tail when the program exits before it is ready', async () => {
    const start = group.start({
      name: 'crash',
      command: node,
      args: ['-e', 'console.error("bad flag --frobnicate"); process.exit(3)'],
      ready: { kind: 'tcp', port: await freePort() },
    });
    await expect(start).rejects.toMatchObject({ code: 'PROCESS_EXITED' });
    await expect(start).rejects.toThrow(/code 3.*\n[\s\S]*bad flag --frobnicate/);
  });

  it('fails clearly when the program cannot be started', async () => {
    const start = group.start({ name: 'missing', command: '/nonexistent/signet-program' });
    await expect(start).rejects.toMatchObject({ code: 'PROCESS_EXITED' });
    await expect(start).rejects.toThrow('/nonexistent/signet-program');
  });

  it('gives up at the deadline, with the log tail, and kills the program', async () => {
    const port = await freePort();
    const start = group.start({
      name: 'silent',
      command: node,
      args: ['-e', 'console.log("still starting"); setInterval(() => {}, 1000)'],
      ready: { kind: 'http', url: `http://127.0.0.1:${port}/` },
      readyTimeoutMs: 1_000,
    });
    await expect(start).rejects.toMatchObject({ code: 'NOT_READY' });
    await expect(start).rejects.toThrow(/within 1000 ms[\s\S]*still starting/);
    expect(group.processes.map((p) => p.name)).not.toContain('silent');
  });

  it('SIGKILLs a program that ignores SIGTERM after the grace period', async () => {
    const port = await freePort();
    const stubborn = await group.start({
      name: 'stubborn',
      command: node,
      args: ['-e', `process.on('SIGTERM', () => console.log('ignoring')); ${httpServer(port)}`],
      ready: { kind: 'tcp', port },
    });
    const started = Date.now();
    await group.stopAll();
    expect(stubborn.running).toBe(false);
    expect((await stubborn.exited).signal).toBe('SIGKILL');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });
});
