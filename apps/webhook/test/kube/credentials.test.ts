import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { fromKubeconfig, loadKubeCredentials } from '../../src/kube/credentials.js';

const dir = mkdtempSync(join(tmpdir(), 'signet-kubeconfig-'));
const b64 = (s: string) => Buffer.from(s).toString('base64');

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

describe('kubeconfig credentials', () => {
  it('reads client certificates and keys, inline or from files relative to the kubeconfig', () => {
    writeFileSync(join(dir, 'client.crt'), 'CERT');
    const creds = fromKubeconfig(
      kubeconfig('certs', { 'client-certificate': 'client.crt', 'client-key-data': b64('KEY') }),
    );
    expect(creds).toMatchObject({
      server: 'https://127.0.0.1:6443',
      source: `${join(dir, 'certs')} (context ctx)`,
    });
    expect([creds.ca?.toString(), creds.cert?.toString(), creds.key?.toString()]).toEqual([
      'CA',
      'CERT',
      'KEY',
    ]);
    expect(creds.token).toBeUndefined();
  });

  it('reads a token, inline or from a token file (read again as it rotates)', () => {
    expect(fromKubeconfig(kubeconfig('token', { token: 's3cr3t' })).token?.()).toBe('s3cr3t');
    writeFileSync(join(dir, 'token-file'), 'from-file\n');
    expect(fromKubeconfig(kubeconfig('token-file-config', { tokenFile: 'token-file' })).token?.()).toBe(
      'from-file',
    );
    expect(
      fromKubeconfig(kubeconfig('insecure', {}, { 'insecure-skip-tls-verify': true })).insecureSkipTlsVerify,
    ).toBe(true);
  });

  it('uses another context when asked (signet audit --context)', () => {
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
    expect(fromKubeconfig(file).server).toBe('https://127.0.0.1:6443');
    expect(loadKubeCredentials(file, {}, '/nonexistent', 'other')).toMatchObject({
      server: 'https://127.0.0.1:7443',
      source: `${file} (context other)`,
    });
    expect(() => fromKubeconfig(file, 'missing')).toThrow(
      new InputError(`${file}: no context named "missing"`),
    );
  });

  it('refuses what it cannot use with one clear line', () => {
    expect(() => fromKubeconfig(kubeconfig('exec', { exec: { command: 'aws' } }))).toThrow(
      /authenticates with a credential plugin, which signet does not run/,
    );
    writeFileSync(join(dir, 'broken'), 'a: [');
    expect(() => fromKubeconfig(join(dir, 'broken'))).toThrow(InputError);
    writeFileSync(join(dir, 'no-context'), JSON.stringify({ clusters: [] }));
    expect(() => fromKubeconfig(join(dir, 'no-context'))).toThrow('no current-context');
    const missing = kubeconfig('missing-cluster', {});
    writeFileSync(
      missing,
      JSON.stringify({ 'current-context': 'ctx', contexts: [{ name: 'ctx', context: { cluster: 'x' } }] }),
    );
    expect(() => fromKubeconfig(missing)).toThrow('no cluster named "x"');
  });
});

describe('where the cluster is', () => {
  it('takes --kubeconfig, then $KUBECONFIG, then ~/.kube/config, then the in-cluster ServiceAccount', () => {
    const file = kubeconfig('env', { token: 't' });
    expect(loadKubeCredentials(undefined, { KUBECONFIG: `/nope:${file}`, HOME: dir }).source).toContain(file);
    const home = mkdtempSync(join(tmpdir(), 'signet-home-'));
    const account = mkdtempSync(join(tmpdir(), 'signet-sa-'));
    writeFileSync(join(account, 'token'), 'sa-token');
    writeFileSync(join(account, 'ca.crt'), 'SA-CA');
    const cluster = loadKubeCredentials(
      undefined,
      { HOME: home, KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      account,
    );
    expect(cluster).toMatchObject({
      server: 'https://[fd00::1]:443',
      source: 'the in-cluster ServiceAccount',
    });
    expect(cluster.token?.()).toBe('sa-token');
    expect(() => loadKubeCredentials(undefined, { HOME: home }, account)).toThrow(/no cluster to talk to/);
  });
});
