// The ImageVerifier's own paths that the real-registry file does not reach: static authorities,
// spec-level policies that read the admitted object (never cached), cancellation and
// non-registry errors. The registry is an in-memory one behind a loopback HTTP server.
import { parseReference } from '@signet/core';
import type { RegistryError } from '@signet/registry';
import { dispatchFetch, RegistryClient } from '@signet/registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CacheResult, VerificationCache } from '../src/cache.js';
import { ImageVerifier } from '../src/image-verifier.js';
import { type CompiledAuthorities, compileAuthorities } from '../src/policy/compile.js';
import { clusterImagePolicy } from './support/policies.js';
import { MemoryRegistry, startServer, type TestServer } from './support/registry-helpers.js';

let server: TestServer;
const memory = new MemoryRegistry();
let host = '';
let image = '';

beforeAll(async () => {
  server = await startServer(memory.handler);
  host = new URL(server.url).host;
  image = `${host}/team/app@${memory.pushImage('team/app', 'v1').digest}`;
});

afterAll(async () => {
  await server?.close();
});

const KEY =
  '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEP/fX8ry2kIoyEAjBR0YvqhrvYxq1\nt42I0z+wQCrpmHAX4qEBkgWEl0KK8qWZ6//hyicnu33nPyN6QWZ+80WP0A==\n-----END PUBLIC KEY-----\n';

async function compiled(
  name: string,
  authorities: unknown[],
  spec: Record<string, unknown> = {},
): Promise<CompiledAuthorities> {
  const cip = clusterImagePolicy(authorities, { images: [{ glob: '**' }], ...spec }, name);
  return compileAuthorities(cip, { revision: () => `${name}@1` });
}

const run = (
  verifier: ImageVerifier,
  policies: CompiledAuthorities[],
  signal = new AbortController().signal,
) =>
  verifier.verifyImage(
    { reference: parseReference(image), policies },
    { signal, deadline: Date.now() + 5000, specInputs: { metadata: { labels: { team: 'a' } } } },
  );

describe('ImageVerifier', () => {
  it('passes static authorities without reading signatures, and caches the pass', async () => {
    const seen: CacheResult[] = [];
    const verifier = new ImageVerifier({
      registry: new RegistryClient({ insecureHosts: [host] }),
      onCache: (r) => seen.push(r),
    });
    const pass = await compiled('static', [{ static: { action: 'pass' } }]);
    const before = server.requests.length;
    expect((await run(verifier, [pass])).checks[0]).toMatchObject({ passed: true });
    expect((await run(verifier, [pass])).checks[0]).toMatchObject({ passed: true });
    expect(server.requests.length).toBe(before);
    expect(seen).toEqual(['miss', 'hit']);
    const fail = await compiled('frozen', [{ static: { action: 'fail', message: 'frozen' } }]);
    expect((await run(verifier, [fail])).checks[0]).toMatchObject({
      passed: false,
      failure: { kind: 'policy' },
    });
  });

  it('never caches a spec-level policy that reads the admitted object', async () => {
    const seen: CacheResult[] = [];
    const verifier = new ImageVerifier({
      registry: new RegistryClient({ insecureHosts: [host] }),
      cache: new VerificationCache(),
      onCache: (r) => seen.push(r),
    });
    const policy = await compiled('labels', [{ static: { action: 'pass' } }], {
      policy: { type: 'cel', data: 'metadata.labels.team == "a"', includeObjectMeta: true },
    });
    expect((await run(verifier, [policy])).checks[0]).toMatchObject({ passed: true });
    expect((await run(verifier, [policy])).checks[0]).toMatchObject({ passed: true });
    expect(seen).toEqual([]);
  });

  it('turns cancellation into an infrastructure failure', async () => {
    const controller = new AbortController();
    controller.abort(new Error('client went away'));
    const verifier = new ImageVerifier({ registry: new RegistryClient({ insecureHosts: [host] }) });
    const result = await run(
      verifier,
      [await compiled('static', [{ static: { action: 'pass' } }])],
      controller.signal,
    );
    expect(result.checks[0]).toMatchObject({ passed: false, failure: { kind: 'infrastructure' } });
  });

  it('reports non-registry discovery errors as the authority being unavailable', async () => {
    const errors: RegistryError[] = [];
    const broken = new RegistryClient({
      insecureHosts: [host],
      fetch: () => {
        throw new TypeError('socket exploded');
      },
    });
    const verifier = new ImageVerifier({ registry: broken, onRegistryError: (e) => errors.push(e) });
    const key = await compiled('keyed', [
      {
        key: {
          data: '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEP/fX8ry2kIoyEAjBR0YvqhrvYxq1\nt42I0z+wQCrpmHAX4qEBkgWEl0KK8qWZ6//hyicnu33nPyN6QWZ+80WP0A==\n-----END PUBLIC KEY-----\n',
        },
      },
    ]);
    const result = await run(verifier, [key]);
    expect(result.checks[0]).toMatchObject({ passed: false, failure: { kind: 'infrastructure' } });
    expect(errors.length).toBeGreaterThan(0);
  });

  it('keeps a denial as it was when the other formats cannot be read for its hint', async () => {
    // The .sig tag answers (nothing there); the referrers, where a bundle would be, do not.
    const verifier = new ImageVerifier({
      registry: new RegistryClient({
        insecureHosts: [host],
        retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
        fetch: (url, init) => {
          if (!url.pathname.endsWith('.sig')) throw new TypeError('socket exploded');
          return dispatchFetch(url, init);
        },
      }),
    });
    const key = await compiled('hintless', [
      {
        key: {
          data: '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEP/fX8ry2kIoyEAjBR0YvqhrvYxq1\nt42I0z+wQCrpmHAX4qEBkgWEl0KK8qWZ6//hyicnu33nPyN6QWZ+80WP0A==\n-----END PUBLIC KEY-----\n',
        },
        signatureFormat: 'legacy',
      },
    ]);
    expect((await run(verifier, [key])).checks[0]).toMatchObject({
      passed: false,
      failure: { kind: 'policy', reason: 'no signature found' },
    });
  });

  it('reads each authority its own formats in turn, and hints only to the one that reads fewer', async () => {
    // A bundle referrer announced as a signature, whose bundle is junk: counted, never verified.
    const bundled = memory.pushImage('team/bundled', 'v1');
    const BUNDLE = 'application/vnd.dev.sigstore.bundle.v0.3+json';
    memory.pushManifest('team/bundled', {
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      artifactType: BUNDLE,
      config: {
        mediaType: 'application/vnd.oci.empty.v1+json',
        digest: memory.pushBlob('team/bundled', '{}').digest,
        size: 2,
      },
      layers: [memory.pushBlob('team/bundled', '{"junk":true}', BUNDLE)],
      subject: { mediaType: bundled.mediaType, digest: bundled.digest, size: bundled.size },
      annotations: { 'dev.sigstore.bundle.predicateType': 'https://sigstore.dev/cosign/sign/v1' },
    });
    const key = { data: KEY };
    const policy = await compiled('mixed', [
      { name: 'legacy-only', key, signatureFormat: 'legacy' },
      { name: 'either', key },
      { name: 'frozen', static: { action: 'fail' } },
    ]);
    const ref = `${host}/team/bundled@${bundled.digest}`;
    const result = await new ImageVerifier({
      registry: new RegistryClient({ insecureHosts: [host] }),
    }).verifyImage(
      { reference: parseReference(ref), policies: [policy] },
      { signal: new AbortController().signal, deadline: Date.now() + 5000 },
    );
    const reasons = Object.fromEntries(
      (result.checks[0]?.authorities ?? []).map((a) => [a.authority, a.passed ? 'passed' : a.failure.reason]),
    );
    expect(reasons).toEqual({
      'legacy-only':
        'no signature found in the legacy .sig/.att tags (signatureFormat: legacy); the image has 1 Sigstore bundle (what cosign 3 writes by default), which this authority does not read',
      either: 'no valid signature: 1 found, 0 verified',
      frozen: 'disallowed by static policy',
    });
  });

  it('fails an authority whose formats could not be read as infrastructure, beside the others', async () => {
    const broken = new RegistryClient({
      insecureHosts: [host],
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
      fetch: () => {
        throw new TypeError('socket exploded');
      },
    });
    const policy = await compiled('broken', [
      { name: 'frozen', static: { action: 'fail' } },
      { name: 'key', key: { data: KEY } },
    ]);
    const check = (await run(new ImageVerifier({ registry: broken }), [policy])).checks[0];
    const reasons = Object.fromEntries(
      (check?.authorities ?? []).map((a) => [a.authority, a.passed ? 'passed' : a.failure.kind]),
    );
    expect(reasons).toEqual({ frozen: 'policy', key: 'infrastructure' });
  });

  it('reads the config files once for the policies that fetch them, and fails as infrastructure when it cannot', async () => {
    const errors: RegistryError[] = [];
    const verifier = new ImageVerifier({
      registry: new RegistryClient({ insecureHosts: [host] }),
      onRegistryError: (error) => errors.push(error),
    });
    const spec = { policy: { type: 'cel', data: 'config != null', fetchConfigFile: true } };
    const [a, b] = [
      await compiled('config-a', [{ static: { action: 'pass' } }], spec),
      await compiled('config-b', [{ static: { action: 'pass' } }], spec),
    ];
    const before = server.requests.length;
    const result = await run(verifier, [a, b]);
    expect(result.checks.map((c) => c.passed)).toEqual([true, true]);
    // One manifest and one config blob, shared by both policies.
    expect(server.requests.length - before).toBe(2);
    const missing = `${host}/team/app@sha256:${'0'.repeat(64)}`;
    const failed = await verifier.verifyImage(
      {
        reference: parseReference(missing),
        policies: [await compiled('config-c', [{ static: { action: 'pass' } }], spec)],
      },
      { signal: new AbortController().signal, deadline: Date.now() + 5000 },
    );
    expect(failed.checks[0]).toMatchObject({
      passed: false,
      failure: { kind: 'infrastructure', reason: 'cannot read the image config files' },
    });
    expect(errors.map((e) => e.code)).toContain('NOT_FOUND');
  });
});

describe('tag resolution', () => {
  it("reuses a recent resolution, and asks again when the shared one died of another caller's deadline", async () => {
    memory.pushImage('team/tagged', 'v1');
    let requests = 0;
    const registry = new RegistryClient({
      insecureHosts: [host],
      fetch: async (url, init) => {
        if (url.pathname.includes('/manifests/')) requests++;
        // the first caller's deadline passes while the registry is slow
        if (requests === 1) await new Promise((resolve) => setTimeout(resolve, 300));
        return dispatchFetch(url, init);
      },
    });
    const verifier = new ImageVerifier({ registry });
    const reference = parseReference(`${host}/team/tagged:v1`);
    const short = new AbortController();
    const first = verifier.resolveDigest(reference, { signal: short.signal, deadline: Date.now() + 100 });
    const second = verifier.resolveDigest(reference, {
      signal: new AbortController().signal,
      deadline: Date.now() + 10_000,
    });
    await expect(first).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(await second).toMatch(/^sha256:/);
    const asked = requests;
    const third = await verifier.resolveDigest(reference, {
      signal: new AbortController().signal,
      deadline: Date.now() + 10_000,
    });
    expect(third).toBe(await second);
    expect(requests).toBe(asked);
  });
});
