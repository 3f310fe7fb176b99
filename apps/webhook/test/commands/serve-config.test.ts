import { describe, expect, it } from 'vitest';
import { serveConfigFrom } from '../../src/commands/serve-config.js';
import { UsageError } from '../../src/errors.js';

const files = { 'tls-cert-file': 'tls.crt', 'tls-key-file': 'tls.key' };

describe('signet serve flags', () => {
  it('applies the documented defaults', () => {
    expect(serveConfigFrom({ ...files, 'policy-file': ['p.yaml'] }, {})).toEqual({
      port: 8443,
      opsPort: 8080,
      host: '0.0.0.0',
      opsHost: '0.0.0.0',
      namespace: 'signet-system',
      policyFiles: ['p.yaml'],
      kubeconfig: undefined,
      tls: { mode: 'files', certFile: 'tls.crt', keyFile: 'tls.key' },
      webhookName: 'signet',
      insecureRegistries: [],
      registries: { insecureRegistries: [], privateHosts: [], caCertificates: [], cloudCredentials: [] },
      cacheTtlMs: 300_000,
      resolveDigests: true,
      allowUnpinnedTags: false,
      exceptionMaxLifetimeMs: 30 * 24 * 3_600_000,
      maxRequestBytes: 4 * 1024 * 1024,
      shutdownDrainMs: 5000,
      shutdownGraceMs: 10_000,
      logLevel: 'info',
      kmsRefreshMs: 300_000,
      tuf: { mirror: undefined, rootFile: undefined, cacheDir: undefined, refreshMs: 3_600_000 },
      audit: {
        intervalMs: 3_600_000,
        allNamespaces: false,
        concurrency: 4,
        maxResults: 500,
        leaseName: 'signet-audit',
        identity: undefined,
      },
    });
    expect(serveConfigFrom({ ...files, host: '127.0.0.1' }, { POD_NAMESPACE: 'sig' })).toMatchObject({
      namespace: 'sig',
      opsHost: '127.0.0.1',
      policyFiles: [],
    });
    expect(
      serveConfigFrom(
        { 'tls-self-managed': true, 'signet-namespace': 'ops', kubeconfig: 'k', context: 'prod' },
        {
          POD_NAMESPACE: 'sig',
        },
      ),
    ).toMatchObject({ namespace: 'ops', kubeconfig: 'k', context: 'prod' });
    expect(serveConfigFrom({ 'tls-self-managed': true }, {}).tls).toEqual({
      mode: 'self-managed',
      secretName: 'signet-webhook-tls',
      serviceName: 'signet-webhook',
    });
  });

  it.each([
    [{ ...files, port: '70000' }, '--port must be a port number, got "70000"'],
    [{ ...files, 'ops-port': 'x' }, '--ops-port must be a port number, got "x"'],
    [{ ...files, 'policy-file': ['p'], kubeconfig: 'k' }, '--policy-file and --kubeconfig are exclusive'],
    [{ ...files, 'policy-file': ['p'], context: 'c' }, '--policy-file and --context are exclusive'],
    [{}, 'TLS is required'],
    [{ 'tls-cert-file': 'c' }, 'TLS is required'],
    [
      { 'tls-self-managed': true, 'tls-cert-file': 'c' },
      '--tls-self-managed and --tls-cert-file/--tls-key-file are exclusive',
    ],
    [
      { 'tls-self-managed': true, 'policy-file': ['p'] },
      '--tls-self-managed keeps its certificate in the cluster',
    ],
    [{ ...files, 'cache-ttl': '5' }, '--cache-ttl must be a duration'],
    [{ ...files, 'log-level': 'loud' }, '--log-level must be one of'],
    [{ ...files, 'kms-refresh': '1s' }, '--kms-refresh must be a duration between 10s and 24h, got "1s"'],
    [{ ...files, 'tuf-refresh': '48h' }, '--tuf-refresh must be a duration between 60s and 24h'],
    [
      { ...files, 'exception-max-lifetime': '30d' },
      '--exception-max-lifetime must be a duration from 1h to 8760h',
    ],
    [
      { ...files, 'exception-max-lifetime': '59m' },
      '--exception-max-lifetime must be a duration from 1h to 8760h',
    ],
    [
      { ...files, 'exception-max-lifetime': '8761h' },
      '--exception-max-lifetime must be a duration from 1h to 8760h',
    ],
    [{ ...files, 'tuf-mirror': 'tuf.example' }, '--tuf-mirror must be an http(s) URL'],
    [{ ...files, 'tuf-root': 'root.json' }, '--tuf-root and --tuf-cache-dir need --tuf-mirror'],
    [
      { ...files, 'insecure-registry': ['http://x'] },
      '--insecure-registry takes host[:port], got "http://x"',
    ],
    [
      { ...files, 'registry-private-host': ['https://x'] },
      '--registry-private-host takes host[:port], got "https://x"',
    ],
    [{ ...files, 'cloud-credentials': ['ecr,aws'] }, '--cloud-credentials takes ecr, gcp, acr, got "aws"'],
    [
      { ...files, 'registry-ca-file': ['/nonexistent/ca.pem'] },
      '--registry-ca-file /nonexistent/ca.pem: cannot be read (ENOENT)',
    ],
    [
      { ...files, 'registry-ca-file': [new URL('../../package.json', import.meta.url).pathname] },
      'no PEM certificate (-----BEGIN CERTIFICATE-----) in it',
    ],
  ])('refuses %j', (values, message) => {
    expect(() => serveConfigFrom(values, {})).toThrow(UsageError);
    expect(() => serveConfigFrom(values, {})).toThrow(message);
  });
});

describe('signet serve registry flags', () => {
  it('reads CA files and cloud providers (repeated or comma-separated)', async () => {
    const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(join(tmpdir(), 'signet-ca-'));
    try {
      const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
      await writeFile(join(dir, 'ca.pem'), pem);
      const config = serveConfigFrom(
        { ...files, 'registry-ca-file': [join(dir, 'ca.pem')], 'cloud-credentials': ['ecr,gcp', 'acr'] },
        {},
      );
      expect(config.registries).toEqual({
        insecureRegistries: [],
        privateHosts: [],
        caCertificates: [pem],
        cloudCredentials: ['ecr', 'gcp', 'acr'],
      });
      const gitlab = serveConfigFrom({ ...files, 'registry-private-host': ['gitlab.corp:443'] }, {});
      expect(gitlab.registries.privateHosts).toEqual(['gitlab.corp:443']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('signet serve TUF flags', () => {
  it('take a mirror, an initial root, a cache and a refresh period', () => {
    const config = serveConfigFrom(
      {
        'tls-cert-file': 'c',
        'tls-key-file': 'k',
        'tuf-mirror': 'https://tuf.example',
        'tuf-root': '/etc/signet/root.json',
        'tuf-cache-dir': '/var/cache/signet/tuf',
        'tuf-refresh': '10m',
        'kms-refresh': '30s',
      },
      {},
    );
    expect(config.tuf).toEqual({
      mirror: 'https://tuf.example',
      rootFile: '/etc/signet/root.json',
      cacheDir: '/var/cache/signet/tuf',
      refreshMs: 600_000,
    });
    expect(config.kmsRefreshMs).toBe(30_000);
  });
});
