import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createDispatcher, proxySettings } from '../../src/net/dispatcher.js';
import { dispatchFetch } from '../../src/net/request.js';

describe('dispatchFetch', () => {
  it('sends a bare request and keeps repeated headers', async () => {
    const server = createServer((request, response) => {
      response.setHeader('set-cookie', ['a=1', 'b=2']);
      response.end(`${request.method} ${request.url}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const response = await dispatchFetch(new URL(`http://127.0.0.1:${port}/v2/`), { method: 'GET' });
      expect(response.status).toBe(200);
      expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
      expect(await new Response(response.body).text()).toBe('GET /v2/');
    } finally {
      server.close();
    }
  });
});

describe('what of undici loads', () => {
  it('is its proxy agent and request API, not the whole package (fetch, WebSocket, caches, mocks)', async () => {
    const server = createServer((_, response) => response.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const dispatcher = await createDispatcher();
      const response = await dispatchFetch(new URL(`http://127.0.0.1:${port}/`), {
        method: 'GET',
        dispatcher,
      });
      expect(await new Response(response.body).text()).toBe('ok');
      await dispatcher.close();
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((path) =>
        path.includes('/undici/'),
      );
      expect(loaded.some((path) => path.endsWith('/lib/dispatcher/env-http-proxy-agent.js'))).toBe(true);
      expect(
        loaded.filter((path) => path.endsWith('/undici/index.js') || path.includes('/lib/web/')),
      ).toEqual([]);
    } finally {
      server.close();
    }
  });
});

describe('network settings', () => {
  it('reads proxy variables in either case, lower case first', () => {
    expect(
      proxySettings({ HTTPS_PROXY: 'http://upper:1', https_proxy: 'http://lower:1', NO_PROXY: '.svc' }),
    ).toEqual({
      httpProxy: '',
      httpsProxy: 'http://lower:1',
      noProxy: '.svc',
    });
  });

  it('builds a dispatcher from process.env when given nothing', async () => {
    const dispatcher = await createDispatcher();
    await dispatcher.close();
  });
});
