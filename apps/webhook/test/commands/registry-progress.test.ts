import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { RegistryProgress } from '../../src/commands/registry-progress.js';

describe('RegistryProgress', () => {
  it('says which request it waits for and for how long, and nothing once it answered', async () => {
    const held: (() => void)[] = [];
    const server = createServer((request, response) => {
      if (request.url === '/slow') held.push(() => response.end());
      else response.end('quick');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const lines: string[] = [];
    const progress = new RegistryProgress((line) => lines.push(line), { intervalMs: 100 });
    const fetch = progress.wrap();
    try {
      await fetch(new URL(`http://${host}/quick`), { method: 'GET' });
      const slow = fetch(new URL(`http://${host}/slow`), { method: 'GET' });
      const second = fetch(new URL(`http://${host}/slow`), { method: 'HEAD' });
      await new Promise((resolve) => setTimeout(resolve, 350));
      expect(lines.length).toBeGreaterThanOrEqual(2);
      // Each tick names the oldest slow request; by the third both are slow.
      const both = new RegExp(`^waiting for the registry: GET ${host}/slow \\(and 1 more\\), 0s so far$`);
      expect(
        lines.some((line) => both.test(line)),
        lines.join('\n'),
      ).toBe(true);
      for (const release of held) release();
      await Promise.all([slow, second]);
      const seen = lines.length;
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect(lines).toHaveLength(seen);
    } finally {
      progress.stop();
      server.closeAllConnections();
      server.close();
    }
  });
});
