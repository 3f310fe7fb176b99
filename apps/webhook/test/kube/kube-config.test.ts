// Which cluster and which credentials a kubeconfig gives, as client-node will send them: TLS
// material and the Authorization header of a request (`applyToHTTPSOptions`). Credential plugins
// run for real (a script printing an ExecCredential). The API server side is e2e's
// (kubeconfig-auth.test.ts).
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InputError } from '../../src/errors.js';
import { loadKubeConfig } from '../../src/kube/kube-config.js';

const dir = mkdtempSync(join(tmpdir(), 'signet-kubeconfig-'));
const b64 = (s: string) => Buffer.from(s).toString('base64');

afterEach(() => {
  vi.unstubAllEnvs();
});

function kubeconfig(
  name: string,
  user: Record<string, unknown>,
  cluster: Record<string, unknown> = {},
): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'ctx',
      contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
      clusters: [
        {
          name: 'c',
          cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': b64('CA'), ...cluster },
        },
      ],
      users: [{ name: 'u', user }],
    }),
  );
  return file;
}

/** What client-node puts on a request made with this configuration. */
async function requestOptions(file: string, context?: string) {
  const { config } = loadKubeConfig({ kubeconfig: file, ...(context ? { context } : {}) });
  const options: RequestOptions & { headers?: Record<string, string> } = {};
  await config.applyToHTTPSOptions(options);
  return {
    server: config.getCurrentCluster()?.server,
    ca: options.ca?.toString(),
    cert: options.cert?.toString(),
    key: options.key?.toString(),
    authorization: options.headers?.Authorization,
  };
}

describe('kubeconfig credentials', () => {
  it('sends client certificates and keys, inline or from files relative to the kubeconfig', async () => {
    writeFileSync(join(dir, 'client.crt'), 'CERT');
    const file = kubeconfig('certs', { 'client-certificate': 'client.crt', 'client-key-data': b64('KEY') });
    expect(await requestOptions(file)).toEqual({
      server: 'https://127.0.0.1:6443',
      ca: 'CA',
      cert: 'CERT',
      key: 'KEY',
      authorization: undefined,
    });
    expect(loadKubeConfig({ kubeconfig: file }).source).toBe(`${file} (context ctx)`);
  });

  it("sends a token, inline or from kubectl's tokenFile (relative to the kubeconfig)", async () => {
    expect((await requestOptions(kubeconfig('token', { token: 's3cr3t' }))).authorization).toBe(
      'Bearer s3cr3t',
    );
    writeFileSync(join(dir, 'token-file'), 'from-file');
    const file = kubeconfig('token-file-config', { tokenFile: 'token-file' });
    expect((await requestOptions(file)).authorization).toBe('Bearer from-file');
    const insecure = kubeconfig('insecure', { token: 't' }, { 'insecure-skip-tls-verify': true });
    const options: RequestOptions = {};
    await loadKubeConfig({ kubeconfig: insecure }).config.applyToHTTPSOptions(options);
    expect(options.rejectUnauthorized).toBe(false);
  });

  it('runs an exec credential plugin (as EKS, GKE, AKS and OIDC logins do) and sends its token', async () => {
    const plugin = join(dir, 'credential-plugin.sh');
    writeFileSync(
      plugin,
      `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-'"$1"'"}}'\n`,
    );
    chmodSync(plugin, 0o755);
    const file = kubeconfig('exec', {
      exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, args: ['plugin'] },
    });
    expect((await requestOptions(file)).authorization).toBe('Bearer from-plugin');
  });

  it('uses another context when asked (--context)', async () => {
    const file = join(dir, 'two-contexts');
    writeFileSync(
      file,
      JSON.stringify({
        'current-context': 'ctx',
        contexts: [
          { name: 'ctx', context: { cluster: 'c', user: 'u' } },
          { name: 'other', context: { cluster: 'd', user: 'u' } },
        ],
        clusters: [
          { name: 'c', cluster: { server: 'https://127.0.0.1:6443' } },
          { name: 'd', cluster: { server: 'https://127.0.0.1:7443' } },
        ],
        users: [{ name: 'u', user: { token: 't' } }],
      }),
    );
    expect((await requestOptions(file)).server).toBe('https://127.0.0.1:6443');
    expect((await requestOptions(file, 'other')).server).toBe('https://127.0.0.1:7443');
    expect(loadKubeConfig({ kubeconfig: file, context: 'other' }).source).toBe(`${file} (context other)`);
    expect(() => loadKubeConfig({ kubeconfig: file, context: 'missing' })).toThrow(
      new InputError(`${file}: no context named "missing"`),
    );
  });

  it('refuses what it cannot use with one clear line', () => {
    writeFileSync(join(dir, 'broken'), 'a: [');
    expect(() => loadKubeConfig({ kubeconfig: join(dir, 'broken') })).toThrow(InputError);
    expect(() => loadKubeConfig({ kubeconfig: join(dir, 'absent') })).toThrow(
      /^cannot read the kubeconfig .*absent: ENOENT/,
    );
    writeFileSync(join(dir, 'no-context'), JSON.stringify({ clusters: [] }));
    expect(() => loadKubeConfig({ kubeconfig: join(dir, 'no-context') })).toThrow('no current-context');
    const missing = join(dir, 'missing-cluster');
    writeFileSync(
      missing,
      JSON.stringify({ 'current-context': 'ctx', contexts: [{ name: 'ctx', context: { cluster: 'x' } }] }),
    );
    expect(() => loadKubeConfig({ kubeconfig: missing })).toThrow('no cluster named "x"');
  });
});

describe('where the cluster is', () => {
  it('takes --kubeconfig, then $KUBECONFIG (merged, first wins), then ~/.kube/config, then the in-cluster ServiceAccount', async () => {
    const first = kubeconfig('env-first', { token: 'first' });
    const second = join(dir, 'env-second');
    writeFileSync(
      second,
      JSON.stringify({
        contexts: [{ name: 'extra', context: { cluster: 'e', user: 'u' } }],
        clusters: [{ name: 'e', cluster: { server: 'https://127.0.0.1:9443' } }],
        users: [{ name: 'u', user: { token: 'second' } }],
      }),
    );
    const home = mkdtempSync(join(tmpdir(), 'signet-home-'));
    vi.stubEnv('HOME', home);
    vi.stubEnv('KUBECONFIG', `/nope:${first}:${second}`);
    const merged = loadKubeConfig();
    expect(merged.source).toBe(`${first}:${second} (context ctx)`);
    expect(merged.config.getContexts().map((c) => c.name)).toEqual(['ctx', 'extra']);
    const options: RequestOptions & { headers?: Record<string, string> } = {};
    await loadKubeConfig({ context: 'extra' }).config.applyToHTTPSOptions(options);
    expect(options.headers?.Authorization).toBe('Bearer first');

    vi.stubEnv('KUBECONFIG', '');
    mkdirSync(join(home, '.kube'));
    writeFileSync(
      join(home, '.kube', 'config'),
      JSON.stringify({
        'current-context': 'h',
        contexts: [{ name: 'h', context: { cluster: 'c' } }],
        clusters: [{ name: 'c', cluster: { server: 'https://h:6443' } }],
      }),
    );
    expect(loadKubeConfig().config.getCurrentCluster()?.server).toBe('https://h:6443');

    const empty = mkdtempSync(join(tmpdir(), 'signet-home-'));
    vi.stubEnv('HOME', empty);
    const prefix = mkdtempSync(join(tmpdir(), 'signet-sa-'));
    const mount = join(prefix, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(mount, { recursive: true });
    writeFileSync(join(mount, 'token'), 'sa-token');
    writeFileSync(join(mount, 'ca.crt'), 'SA-CA');
    vi.stubEnv('KUBERNETES_SERVICE_HOST', 'fd00::1');
    vi.stubEnv('KUBERNETES_SERVICE_PORT', '443');
    const cluster = loadKubeConfig({}, prefix);
    expect(cluster.source).toBe('the in-cluster ServiceAccount');
    expect(cluster.config.getCurrentCluster()?.server).toBe('https://[fd00::1]:443');
    const inPod: RequestOptions & { headers?: Record<string, string> } = {};
    await cluster.config.applyToHTTPSOptions(inPod);
    expect([inPod.headers?.Authorization, inPod.ca?.toString()]).toEqual(['Bearer sa-token', 'SA-CA']);

    vi.stubEnv('KUBERNETES_SERVICE_HOST', '');
    expect(() => loadKubeConfig({}, prefix)).toThrow(/^no cluster to talk to/);
    expect(() => loadKubeConfig({ context: 'x' }, prefix)).toThrow(
      '--context x: no kubeconfig to find it in',
    );
  });
});
