import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../src/exec.ts';
import { createRunDir, ProcessGroup } from '../src/process.ts';
import { type HttpProxy, startHttpProxy } from '../src/proxy.ts';
import { mintServerCertificate } from '../src/tls.ts';

// The forward proxy, built from the Go module proxy, between a real client and loopback servers:
// Node itself in a child process, which follows HTTP_PROXY, HTTPS_PROXY and NO_PROXY with
// NODE_USE_ENV_PROXY=1.

const listen = async (server: Server): Promise<string> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
};

/** GET `url` from a child Node process with `env`; its status and body. */
async function fetchFromChild(url: string, env: NodeJS.ProcessEnv): Promise<string> {
  const script = `fetch(${JSON.stringify(url)}).then(async (r) => console.log(r.status, await r.text()))`;
  const { stdout } = await runCommand(process.execPath, ['-e', script], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_USE_ENV_PROXY: '1', ...env },
    timeoutMs: 30_000,
  });
  return stdout.trim();
}

describe('startHttpProxy', () => {
  let group: ProcessGroup;
  let proxy: HttpProxy;
  let plain: Server;
  let secure: Server;
  let plainHost = '';
  let secureHost = '';
  let caFile = '';

  beforeAll(async () => {
    group = new ProcessGroup({ runDir: await createRunDir('signet-proxy-test-') });
    proxy = await startHttpProxy({ group });
    plain = createHttpServer((request, response) => response.end(`plain ${request.url}`));
    const certificate = await mintServerCertificate(group.runDir, 'origin');
    caFile = certificate.certPath;
    secure = createHttpsServer({ cert: certificate.pem, key: certificate.keyPem }, (request, response) =>
      response.end(`secure ${request.url}`),
    );
    [plainHost, secureHost] = await Promise.all([listen(plain), listen(secure)]);
  });

  afterAll(async () => {
    plain?.close();
    secure?.close();
    await group?.stopAll();
  });

  it('forwards a plain HTTP request to a loopback server and logs its target', async () => {
    const answer = await fetchFromChild(`http://${plainHost}/v2/`, { HTTP_PROXY: proxy.url });
    expect(answer).toBe('200 plain /v2/');
    expect(await proxy.targets()).toContain(plainHost);
  });

  it('tunnels HTTPS with CONNECT (the TLS session is end to end) and logs its target', async () => {
    const answer = await fetchFromChild(`https://${secureHost}/token`, {
      HTTPS_PROXY: proxy.url,
      NODE_EXTRA_CA_CERTS: caFile,
    });
    expect(answer).toBe('200 secure /token');
    expect(await proxy.targets()).toContain(secureHost);
    expect(await proxy.process.log()).toContain(`target CONNECT ${secureHost}`);
  });

  it('sees nothing of a request that NO_PROXY sends around it', async () => {
    const before = await proxy.targets();
    const answer = await fetchFromChild(`http://${plainHost}/direct`, {
      HTTP_PROXY: proxy.url,
      NO_PROXY: '127.0.0.1',
    });
    expect(answer).toBe('200 plain /direct');
    expect(await proxy.targets()).toEqual(before);
  });

  it('answers 502 for a target that refuses connections, still logging it', async () => {
    const dead = createHttpServer();
    const deadHost = await listen(dead);
    await new Promise((resolve) => dead.close(resolve));
    const answer = await fetchFromChild(`http://${deadHost}/`, { HTTP_PROXY: proxy.url });
    expect(answer).toMatch(/^50\d/);
    expect(await proxy.targets()).toContain(deadHost);
  });
});
