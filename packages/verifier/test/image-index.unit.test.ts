// The corners of `signet.dev/index-signatures` that real signing does not reach: an index whose
// manifest cannot be read, one that lists nothing runnable, too many platforms, a nested index,
// buildx's attestation manifests, and a value the annotation does not take. The registry is an
// in-memory one behind a loopback HTTP server; static authorities stand in for signatures.
import { parseReference } from '@signet/core';
import { dispatchFetch, RegistryClient } from '@signet/registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PLATFORMS, verifyIndexed } from '../src/image-index.js';
import { ImageVerifier } from '../src/image-verifier.js';
import { type CompiledAuthorities, compileAuthorities } from '../src/policy/compile.js';
import { PolicyCompileError } from '../src/policy/errors.js';
import type { PolicyCheck } from '../src/policy/verify-policy.js';
import { clusterImagePolicy } from './support/policies.js';
import { MemoryRegistry, startServer, type TestServer } from './support/registry-helpers.js';

const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
const KEY =
  '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEP/fX8ry2kIoyEAjBR0YvqhrvYxq1\nt42I0z+wQCrpmHAX4qEBkgWEl0KK8qWZ6//hyicnu33nPyN6QWZ+80WP0A==\n-----END PUBLIC KEY-----\n';

let server: TestServer;
const memory = new MemoryRegistry();
let host = '';

beforeAll(async () => {
  server = await startServer(memory.handler);
  host = new URL(server.url).host;
});

afterAll(async () => {
  await server?.close();
});

/** An index in `team/app` listing `entries` (descriptors with a platform, or as given). */
function pushIndex(entries: object[]): string {
  return `${host}/team/app@${memory.pushManifest('team/app', { schemaVersion: 2, mediaType: OCI_INDEX, manifests: entries }).digest}`;
}

const platform = (architecture: string) => ({
  ...memory.pushImage('team/app', `v-${architecture}-${Math.random()}`),
  platform: { os: 'linux', architecture },
});

async function compiled(
  mode: string,
  authority: object = { key: { data: KEY } },
): Promise<CompiledAuthorities> {
  const cip = clusterImagePolicy([authority], { images: [{ glob: '**' }] }, 'multi');
  const annotated = {
    ...cip,
    metadata: { ...cip.metadata, annotations: { 'signet.dev/index-signatures': mode } },
  };
  return compileAuthorities(annotated, { revision: () => `multi@${mode}` });
}

async function check(
  image: string,
  policy: CompiledAuthorities,
  registry = new RegistryClient({ insecureHosts: [host] }),
) {
  const result = await new ImageVerifier({ registry }).verifyImage(
    { reference: parseReference(image), policies: [policy] },
    { signal: new AbortController().signal, deadline: Date.now() + 5_000 },
  );
  return result.checks[0] as PolicyCheck;
}

const reason = (result: PolicyCheck) => (result.passed ? 'passed' : result.failure.reason);

describe('signet.dev/index-signatures', () => {
  it('refuses an index that lists no platform, too many, or an index in it', async () => {
    const pass = await compiled('platforms', { static: { action: 'pass' } });
    expect(reason(await check(pushIndex([]), pass))).toBe('the index lists no platform manifests');
    const many = Array.from({ length: MAX_PLATFORMS + 1 }, () => platform('amd64'));
    expect(reason(await check(pushIndex(many), pass))).toBe(
      `the index lists ${MAX_PLATFORMS + 1} platform manifests; at most ${MAX_PLATFORMS} are verified`,
    );
    const inner = memory.pushManifest('team/app', { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [] });
    expect(reason(await check(pushIndex([platform('amd64'), inner]), pass))).toBe(
      `platform unnamed (${inner.digest}) is an index itself; nested indexes are not verified per platform`,
    );
    expect(reason(await check(pushIndex([platform('amd64'), platform('arm64')]), pass))).toBe('passed');
  });

  it("passes over buildx's attestation manifests: no node runs them", async () => {
    const provenance = {
      ...memory.pushImage('team/app', 'att'),
      platform: { os: 'unknown', architecture: 'unknown' },
    };
    const attestation = {
      ...provenance,
      annotations: { 'vnd.docker.reference.type': 'attestation-manifest' },
    };
    const arm64 = platform('arm64');
    const result = await check(pushIndex([attestation, arm64]), await compiled('platforms'));
    expect(reason(result)).toBe(`platform linux/arm64 (${arm64.digest}): no signature found`);
  });

  it('judges an image that is not an index by its own digest', async () => {
    const single = `${host}/team/app@${memory.pushImage('team/app', 'single').digest}`;
    for (const mode of ['platforms', 'index-or-platforms', 'index-and-platforms']) {
      expect(reason(await check(single, await compiled(mode))), mode).toBe('no signature found');
      expect(reason(await check(single, await compiled(mode, { static: { action: 'pass' } }))), mode).toBe(
        'passed',
      );
    }
  });

  it('fails as infrastructure when the index cannot be read, and reads nothing for the default', async () => {
    const image = pushIndex([platform('amd64')]);
    const digest = image.split('@')[1] as string;
    const broken = new RegistryClient({
      insecureHosts: [host],
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
      fetch: (url, init) => {
        if (url.pathname.endsWith(`/manifests/${digest}`)) throw new TypeError('socket exploded');
        return dispatchFetch(url, init);
      },
    });
    const result = await check(image, await compiled('platforms'), broken);
    expect(result).toMatchObject({
      passed: false,
      failure: { kind: 'infrastructure', reason: 'cannot read the image index' },
    });
    const pass = await compiled('index', { static: { action: 'pass' } });
    expect((await check(image, pass, broken)).passed).toBe(true);
  });

  it('is an infrastructure failure for index-or-platforms when either side could not be checked', async () => {
    const arm64 = platform('arm64');
    const image = pushIndex([arm64]);
    const broken = new RegistryClient({
      insecureHosts: [host],
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
      fetch: (url, init) => {
        if (url.pathname.includes(arm64.digest.replace(':', '-'))) throw new TypeError('socket exploded');
        return dispatchFetch(url, init);
      },
    });
    const result = await check(image, await compiled('index-or-platforms'), broken);
    expect(result).toMatchObject({ passed: false, failure: { kind: 'infrastructure' } });
    expect(reason(result)).toMatch(
      /^neither the index nor each of its platforms passes: the index: no signature found; platform linux\/arm64 \(sha256:[0-9a-f]{64}\): cannot read signatures from the registry$/,
    );
  });

  it('refuses a value it does not take, naming the annotation', async () => {
    const error = await compiled('every-platform').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PolicyCompileError);
    expect(error).toMatchObject({
      code: 'INVALID_ANNOTATION',
      path: 'metadata.annotations["signet.dev/index-signatures"]',
      problem: '"every-platform" is not one of index, platforms, index-or-platforms, index-and-platforms',
    });
  });

  it('combines the causes of the index and of the platform that failed, and reads the index by default', async () => {
    const either = await compiled('index-or-platforms');
    const failing = (cause?: Error): PolicyCheck => ({
      policy: 'multi',
      passed: false,
      failure: { kind: 'policy', reason: 'no', ...(cause ? { cause } : {}) },
      authorities: [],
    });
    const manifest = async () =>
      ({ kind: 'index', manifests: [{ ...platform('arm64'), annotations: {} }] }) as never;
    const judged = (index: PolicyCheck, each: PolicyCheck) =>
      verifyIndexed(either, {
        digest: 'sha256:index',
        manifest,
        verifyAt: async (digest) => (digest === 'sha256:index' ? index : each),
        unreadable: () => ({ kind: 'infrastructure', reason: 'unreadable' }),
      });
    const causeOf = (check: PolicyCheck) => (check.passed ? undefined : check.failure.cause);
    expect(causeOf(await judged(failing(), failing()))).toBeUndefined();
    const one = new Error('one');
    expect(causeOf(await judged(failing(one), failing()))).toBe(one);
    const both = causeOf(await judged(failing(one), failing(new Error('two'))));
    expect(both).toBeInstanceOf(AggregateError);
    expect((both as AggregateError).errors.map((e: Error) => e.message)).toEqual(['one', 'two']);
    // A compiled policy from elsewhere (no indexSignatures): the index's own digest, nothing read.
    const { indexSignatures: _, ...unannotated } = either;
    let read = false;
    const own = await verifyIndexed(unannotated, {
      digest: 'sha256:index',
      manifest: async () => {
        read = true;
        return manifest();
      },
      verifyAt: async () => failing(one),
      unreadable: () => ({ kind: 'infrastructure', reason: 'unreadable' }),
    });
    expect([own.passed, read]).toEqual([false, false]);
  });
});
