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
      cacheTtlMs: 300_000,
      resolveDigests: true,
      allowUnpinnedTags: false,
      maxRequestBytes: 4 * 1024 * 1024,
      shutdownDrainMs: 5000,
      shutdownGraceMs: 10_000,
      logLevel: 'info',
    });
    expect(serveConfigFrom({ ...files, host: '127.0.0.1' }, { POD_NAMESPACE: 'sig' })).toMatchObject({
      namespace: 'sig',
      opsHost: '127.0.0.1',
      policyFiles: [],
    });
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
    [
      { ...files, 'insecure-registry': ['http://x'] },
      '--insecure-registry takes host[:port], got "http://x"',
    ],
  ])('refuses %j', (values, message) => {
    expect(() => serveConfigFrom(values, {})).toThrow(UsageError);
    expect(() => serveConfigFrom(values, {})).toThrow(message);
  });
});
