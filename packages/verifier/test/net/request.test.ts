import { createServer } from 'node:http';
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
