import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/flags.js';
import { SERVE_COMMAND, serveConfigFrom } from '../../src/commands/serve-config.js';
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
      clientAuth: undefined,
      maxConnections: 1024,
      maxConnectionsPerSource: 256,
      webhookName: 'signet',
      leaderIdentity: undefined,
      insecureRegistries: [],
      registries: {
        insecureRegistries: [],
        privateHosts: [],
        caCertificates: [],
        cloudCredentials: [],
        kmsEndpoints: [],
      },
      cacheTtlMs: 300_000,
      resolveDigests: true,
      allowUnpinnedTags: false,
      signatureFormatDefault: ['legacy', 'bundle'],
      exceptionMaxLifetimeMs: 30 * 24 * 3_600_000,
      maxRequestBytes: 4 * 1024 * 1024,
      policyValidationConcurrency: 2,
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
      },
      records: {
        enabled: false,
        staleIfErrorMs: 86_400_000,
        maxRecords: 5000,
        keySecret: 'signet-webhook-records-key',
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

  it('takes the verification-record flags (cluster only), refusing what would be unbounded', () => {
    const cluster = { 'tls-self-managed': true };
    expect(
      serveConfigFrom(
        {
          ...cluster,
          'verification-records': true,
          'stale-if-error': '2h30m',
          'max-verification-records': '100',
          'verification-records-secret': 'records-key',
        },
        {},
      ).records,
    ).toEqual({ enabled: true, staleIfErrorMs: 9_000_000, maxRecords: 100, keySecret: 'records-key' });
    expect(serveConfigFrom({ ...cluster, 'stale-if-error': '0' }, {}).records.staleIfErrorMs).toBe(0);
    for (const [flags, message] of [
      [{ 'stale-if-error': 'a day' }, /--stale-if-error must be a duration/],
      [{ 'stale-if-error': '721h' }, /at most 720h/],
      [{ 'max-verification-records': '99' }, /from 100 to 9000/],
      [{ 'max-verification-records': '9001' }, /from 100 to 9000/],
      [{ 'verification-records-secret': 'Key!' }, /a Kubernetes object name/],
    ] as const) {
      expect(() => serveConfigFrom({ ...cluster, ...flags }, {})).toThrow(message);
    }
    expect(() =>
      serveConfigFrom({ ...files, 'policy-file': ['p.yaml'], 'verification-records': true }, {}),
    ).toThrow(/cannot be used with --policy-file/);
  });

  it("reads the formats of an authority without signatureFormat: both, or policy-controller's legacy alone", () => {
    const formats = (value: string) =>
      serveConfigFrom({ ...files, 'signature-format-default': value }, {}).signatureFormatDefault;
    expect(formats('legacy')).toEqual(['legacy']);
    expect(formats('bundle, legacy')).toEqual(['bundle', 'legacy']);
    for (const wrong of ['notation', 'legacy,legacy', '', 'legacy,']) {
      expect(() => formats(wrong), wrong).toThrow(
        `--signature-format-default must be signature formats separated by commas, each once (legacy, bundle), got ${JSON.stringify(wrong)}`,
      );
    }
    const parsed = parseCommandLine(SERVE_COMMAND, ['--signature-format-default=legacy']);
    expect(parsed.values['signature-format-default']).toBe('legacy');
  });

  it('takes the client CA (required unless if-given) and the connection limits', () => {
    expect(serveConfigFrom({ ...files, 'client-ca-file': 'ca.crt' }, {}).clientAuth).toEqual({
      caFile: 'ca.crt',
      required: true,
    });
    expect(
      serveConfigFrom({ ...files, 'client-ca-file': 'ca.crt', 'client-auth': 'if-given' }, {}).clientAuth,
    ).toEqual({ caFile: 'ca.crt', required: false });
    expect(
      serveConfigFrom({ ...files, 'max-connections': '64', 'max-connections-per-source': '8' }, {}),
    ).toMatchObject({ maxConnections: 64, maxConnectionsPerSource: 8 });
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
    [{ ...files, 'client-auth': 'if-given' }, '--client-auth needs --client-ca-file'],
    [
      { ...files, 'client-ca-file': 'ca.crt', 'client-auth': 'optional' },
      '--client-auth must be required or if-given, got "optional"',
    ],
    [
      { ...files, 'max-connections': '0' },
      '--max-connections must be a whole number from 1 to 65536, got "0"',
    ],
    [
      { ...files, 'max-connections': '64', 'max-connections-per-source': '128' },
      '--max-connections-per-source must not be above --max-connections',
    ],
    [{ ...files, 'cache-ttl': '5' }, '--cache-ttl must be a duration'],
    [{ ...files, 'log-level': 'loud' }, '--log-level must be one of'],
    [{ ...files, 'kms-refresh': '1s' }, '--kms-refresh must be a duration between 10s and 24h, got "1s"'],
    [
      { ...files, 'policy-validation-concurrency': '0' },
      '--policy-validation-concurrency must be a whole number from 1 to 16, got "0"',
    ],
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
    [{ ...files, 'private-host': ['https://x'] }, '--private-host takes host[:port], got "https://x"'],
    [{ ...files, 'kms-endpoint': ['https://kms'] }, '--kms-endpoint takes host[:port], got "https://kms"'],
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
        kmsEndpoints: [],
      });
      const gitlab = serveConfigFrom(
        { ...files, 'private-host': ['gitlab.corp:443'], 'kms-endpoint': ['localstack:4566'] },
        {},
      );
      expect(gitlab.registries.privateHosts).toEqual(['gitlab.corp:443']);
      expect(gitlab.registries.kmsEndpoints).toEqual(['localstack:4566']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('signet serve outbound flags', () => {
  it('keeps --registry-private-host working as a spelling of --private-host, and takes --kms-endpoint', () => {
    const { values } = parseCommandLine(SERVE_COMMAND, [
      '--policy-file=p.yaml',
      '--tls-cert-file=c',
      '--tls-key-file=k',
      '--registry-private-host=gitlab.corp',
      '--private-host=tuf.corp:8080',
      '--kms-endpoint=localstack:4566',
      '--kms-endpoint=kms.corp.example',
    ]);
    const config = serveConfigFrom(values, {});
    expect(config.registries.privateHosts).toEqual(['gitlab.corp', 'tuf.corp:8080']);
    expect(config.registries.kmsEndpoints).toEqual(['localstack:4566', 'kms.corp.example']);
  });
});

describe('signet serve Lease identity', () => {
  it('is the Pod name unless given; --audit-identity is its old spelling', () => {
    const base = ['--policy-file=p.yaml', '--tls-cert-file=c', '--tls-key-file=k'];
    const from = (args: string[], env: NodeJS.ProcessEnv) => {
      const parsed = parseCommandLine(SERVE_COMMAND, [...base, ...args]);
      return { identity: serveConfigFrom(parsed.values, env).leaderIdentity, warnings: parsed.warnings };
    };
    expect(from([], { POD_NAME: 'signet-abc' })).toEqual({ identity: 'signet-abc', warnings: [] });
    expect(from([], {})).toEqual({ identity: undefined, warnings: [] });
    expect(from(['--leader-identity=replica-a'], { POD_NAME: 'signet-abc' }).identity).toBe('replica-a');
    expect(from(['--audit-identity=replica-b'], {})).toEqual({
      identity: 'replica-b',
      warnings: ['--audit-identity is deprecated; use --leader-identity'],
    });
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
