// ImageVerifier end to end: real registries (distribution without the referrers API, an OCI 1.1
// registry with it), images pushed by crane, signatures and attestations made by the real cosign
// CLI, policies parsed and compiled as the webhook does.

import { createHash } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { checkedVerdict, compilePolicy, parseReference } from '@signet/core';
import { dispatchFetch, RegistryClient } from '@signet/registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CacheResult, VerificationCache } from '../src/cache.js';
import { type ImageVerification, ImageVerifier } from '../src/image-verifier.js';
import type { PassRecords, RecordedPass } from '../src/pass-records.js';
import { type CompiledAuthorities, compileAuthorities } from '../src/policy/compile.js';
import type { PolicyCheck } from '../src/policy/verify-policy.js';
import { clusterImagePolicy } from './support/policies.js';
import { ensureTestTools, loadTestbed, type Testbed } from './support/registry-helpers.js';

const SETUP_TIMEOUT = 30 * 60_000;

describe('ImageVerifier with real registries and real cosign signatures', () => {
  let testbed: typeof Testbed;
  let group: Testbed.ProcessGroup | undefined;
  let runDir = '';
  let plain: Testbed.Registry;
  let oci: Testbed.Registry;
  let crane: string;
  let cosign: Testbed.Cosign;
  let key: Testbed.CosignKeyPair;
  let otherKey: Testbed.CosignKeyPair;
  let publicKey = '';
  let otherPublicKey = '';
  const requests: string[] = [];
  let registry: RegistryClient;
  let silent: Server;
  let silentHost = '';

  beforeAll(async () => {
    testbed = await loadTestbed();
    ({ crane } = await ensureTestTools(testbed, ['crane', 'cosign', 'registry', 'oci-registry']));
    runDir = await testbed.createRunDir('signet-verifier-image-');
    group = new testbed.ProcessGroup({ runDir, graceMs: 2_000 });
    const started = group;
    [plain, oci] = await Promise.all([
      testbed.startRegistry({ referrers: false, group: started }),
      testbed.startRegistry({ referrers: true, group: started }),
    ]);
    cosign = await testbed.createCosign({ workDir: runDir });
    key = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
    otherKey = await cosign.generateKeyPair(join(runDir, 'other'), 'pw');
    const { readFile } = await import('node:fs/promises');
    publicKey = await readFile(key.publicKey, 'utf8');
    otherPublicKey = await readFile(otherKey.publicKey, 'utf8');
    // A registry that accepts connections and never answers: the deadline must end the wait.
    silent = createServer(() => undefined).listen(0, '127.0.0.1');
    await new Promise((resolve) => silent.once('listening', resolve));
    silentHost = `127.0.0.1:${(silent.address() as { port: number }).port}`;
    registry = new RegistryClient({
      insecureHosts: [plain.host, oci.host, silentHost],
      fetch: (url, init) => {
        requests.push(`${init.method} ${url.host}${url.pathname}`);
        return dispatchFetch(url, init);
      },
    });
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    silent?.close();
    await group?.stopAll();
    if (runDir !== '' && !process.env.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
  });

  /** Pushes a unique image; `ref` names it by digest. */
  async function push(where: Testbed.Registry, repository: string, tag = 'v1') {
    const digest = await testbed.pushRandomImage(where, repository, tag, { crane, workDir: runDir });
    return { digest, ref: `${where.host}/${repository}@${digest}` };
  }

  let revisions = 0;
  /** A compiled policy; each call is a new revision, as a changed policy would be. */
  async function policy(name: string, authorities: unknown[], glob = '**'): Promise<CompiledAuthorities> {
    const cip = clusterImagePolicy(authorities, { images: [{ glob }] }, name);
    const revision = `${name}@${++revisions}`;
    return compileAuthorities(cip, { revision: () => revision });
  }

  function verify(
    verifier: ImageVerifier,
    image: string,
    policies: CompiledAuthorities[],
    timeoutMs = 20_000,
  ) {
    const controller = new AbortController();
    return verifier.verifyImage(
      { reference: parseReference(image), policies },
      { signal: controller.signal, deadline: Date.now() + timeoutMs },
    );
  }

  const only = (result: ImageVerification): PolicyCheck => {
    expect(result.checks).toHaveLength(1);
    return result.checks[0] as PolicyCheck;
  };

  it('passes a keyed legacy signature made by cosign, and names the authority and signer', async () => {
    const image = await push(plain, 'team/app');
    await cosign.signLegacyKeyed(image.ref, key);
    const verifier = new ImageVerifier({ registry });
    const result = await verify(verifier, image.ref, [
      await policy('release', [{ name: 'release-key', key: { data: publicKey } }]),
    ]);
    const check = only(result);
    expect(check).toMatchObject({ policy: 'release', passed: true, authority: 'release-key' });
    expect(result.digest).toBe(image.digest);
    expect(check.authorities[0]).toMatchObject({ passed: true, counts: { found: 1, verified: 1 } });
    // Core joins the results with its own records of the policies (their mode) into the verdict.
    const path = 'spec.containers[0].image';
    const planned = {
      kind: 'verify' as const,
      target: {
        path,
        image: image.ref,
        pointer: '/spec/containers/0/image',
        field: 'containers' as const,
        index: 0,
        name: 'app',
      },
      reference: parseReference(image.ref),
      policies: [compilePolicy(clusterImagePolicy([], {}, 'release'))],
      notes: {},
    };
    expect(checkedVerdict(planned, result.checks)).toEqual({
      path: 'spec.containers[0].image',
      image: image.ref,
      outcome: {
        kind: 'policies',
        verdicts: [{ policy: 'release', mode: 'enforce', passed: true, authority: 'release-key' }],
      },
    });
  });

  it('refuses the signature for another key, and an unsigned image, as policy failures', async () => {
    const signed = await push(plain, 'team/keyed');
    await cosign.signLegacyKeyed(signed.ref, otherKey);
    const unsigned = await push(plain, 'team/unsigned');
    const verifier = new ImageVerifier({ registry });
    const wanted = await policy('release', [{ name: 'release-key', key: { data: publicKey } }]);
    const wrong = only(await verify(verifier, signed.ref, [wanted]));
    expect(wrong.passed).toBe(false);
    if (!wrong.passed) {
      expect(wrong.failure.kind).toBe('policy');
      expect(wrong.failure.reason).toMatch(/^no valid signature: 1 found, 0 verified/);
    }
    const none = only(await verify(verifier, unsigned.ref, [wanted]));
    expect(none).toMatchObject({ passed: false, failure: { kind: 'policy' } });
    // either key passes when the policy lists both (any authority may pass)
    const both = await policy('both', [
      { key: { data: publicKey } },
      { name: 'other', key: { data: otherPublicKey } },
    ]);
    expect(only(await verify(verifier, signed.ref, [both]))).toMatchObject({
      passed: true,
      authority: 'other',
    });
  });

  it('resolves a tag and verifies the digest it points at', async () => {
    const image = await push(plain, 'team/tagged', 'v7');
    await cosign.signLegacyKeyed(image.ref, key);
    const verifier = new ImageVerifier({ registry });
    const result = await verify(verifier, `${plain.host}/team/tagged:v7`, [
      await policy('release', [{ key: { data: publicKey } }]),
    ]);
    expect(result.digest).toBe(image.digest);
    expect(only(result).passed).toBe(true);
  });

  it('passes keyed bundles through the referrers API and through the fallback tag', async () => {
    const verifier = new ImageVerifier({ registry });
    const bundlePolicy = await policy('bundles', [{ key: { data: publicKey }, signatureFormat: 'bundle' }]);
    for (const where of [oci, plain]) {
      const image = await push(where, 'team/bundled');
      await cosign.signBundleKeyed(image.ref, key);
      expect(only(await verify(verifier, image.ref, [bundlePolicy])), where.host).toMatchObject({
        passed: true,
      });
      // the same image has no legacy signature; an authority without signatureFormat reads both
      const legacy = await policy('legacy', [{ key: { data: publicKey }, signatureFormat: 'legacy' }]);
      expect(only(await verify(verifier, image.ref, [legacy])).passed, where.host).toBe(false);
      const either = await policy('either', [{ key: { data: publicKey } }]);
      expect(only(await verify(verifier, image.ref, [either])).passed, where.host).toBe(true);
    }
  });

  it('says what the image has in the other format when an authority finds nothing (issue 9, item 11)', async () => {
    const verifier = new ImageVerifier({ registry });
    const legacyPolicy = await policy('legacy', [{ key: { data: publicKey }, signatureFormat: 'legacy' }]);
    const bundlePolicy = await policy('bundles', [{ key: { data: publicKey }, signatureFormat: 'bundle' }]);
    const bundled = await push(oci, 'team/only-bundles');
    await cosign.signBundleKeyed(bundled.ref, key);
    expect(only(await verify(verifier, bundled.ref, [legacyPolicy]))).toMatchObject({
      passed: false,
      failure: {
        kind: 'policy',
        reason:
          'no signature found in the legacy .sig/.att tags (signatureFormat: legacy); the image has 1 Sigstore bundle (what cosign 3 writes by default), which this authority does not read',
      },
    });
    const legacy = await push(oci, 'team/only-legacy');
    await cosign.signLegacyKeyed(legacy.ref, key);
    expect(only(await verify(verifier, legacy.ref, [bundlePolicy]))).toMatchObject({
      passed: false,
      failure: {
        reason:
          'no signature found as a Sigstore bundle (signatureFormat: bundle); the image has 1 legacy signature (the .sig/.att tags), which this authority does not read',
      },
    });
    const unsigned = await push(oci, 'team/unsigned-anywhere');
    expect(only(await verify(verifier, unsigned.ref, [bundlePolicy]))).toMatchObject({
      failure: { reason: 'no signature found' },
    });
  });

  it('verifies cosign attestations with a CEL policy over the predicate', async () => {
    const image = await push(plain, 'team/attested');
    const predicate = join(runDir, 'predicate.json');
    await writeFile(predicate, JSON.stringify({ builder: { id: 'https://ci.example/builder' }, level: 3 }));
    await cosign.attest(image.ref, key, {
      predicatePath: predicate,
      type: 'https://example.com/build/v1',
      format: 'legacy',
    });
    const verifier = new ImageVerifier({ registry });
    const attestation = (expression: string) =>
      policy('attested', [
        {
          key: { data: publicKey },
          attestations: [
            {
              name: 'build',
              predicateType: 'https://example.com/build/v1',
              policy: { type: 'cel', data: expression },
            },
          ],
        },
      ]);
    expect(only(await verify(verifier, image.ref, [await attestation('predicate.level >= 3')])).passed).toBe(
      true,
    );
    const failing = only(await verify(verifier, image.ref, [await attestation('predicate.level >= 4')]));
    expect(failing).toMatchObject({ passed: false, failure: { kind: 'policy' } });
  });

  it('reuses passes from the cache, and shares one set of registry fetches among 200 concurrent requests', async () => {
    const image = await push(oci, 'team/popular');
    await cosign.signLegacyKeyed(image.ref, key);
    const compiled = await policy('release', [{ key: { data: publicKey } }]);
    const seen: CacheResult[] = [];
    const verifier = new ImageVerifier({
      registry,
      cache: new VerificationCache(),
      onCache: (r) => seen.push(r),
    });
    const before = requests.length;
    const results = await Promise.all(
      Array.from({ length: 200 }, () => verify(verifier, image.ref, [compiled])),
    );
    const cold = requests.slice(before);
    expect(results.every((r) => only(r).passed)).toBe(true);
    expect(seen.filter((r) => r === 'miss')).toHaveLength(1);
    expect(seen.filter((r) => r === 'shared')).toHaveLength(199);
    // one discovery: the .sig manifest and its layer blob, nothing repeated
    expect(new Set(cold).size).toBe(cold.length);
    const warm = requests.length;
    expect(only(await verify(verifier, image.ref, [compiled])).passed).toBe(true);
    expect(requests.length).toBe(warm);
    expect(seen.at(-1)).toBe('hit');
  });

  it('a second verifier (another replica, a restart) takes a recorded pass instead of the registry (issue 24)', async () => {
    const image = await push(oci, 'team/recorded');
    await cosign.signLegacyKeyed(image.ref, key);
    const compiled = await policy('release', [{ key: { data: publicKey } }]);
    // The store as Signet's records are to the verifier: a pass per revision and image, with what
    // is left of its lifetime. A fake of the cluster store; the webhook's is tested on a real API server.
    const stored = new Map<string, RecordedPass>();
    const written: string[] = [];
    let lookups = 0;
    const keyOf = (p: CompiledAuthorities, i: { registry: string; repository: string; digest: string }) =>
      `${p.revision} ${i.registry}/${i.repository}@${i.digest}`;
    const records: PassRecords = {
      find: (p, i) => {
        lookups++;
        return stored.get(keyOf(p, i));
      },
      passed: (p, i, check) => {
        written.push(keyOf(p, i));
        stored.set(keyOf(p, i), { check, freshForMs: 50 });
      },
    };
    const first = new ImageVerifier({ registry, cache: new VerificationCache(), records });
    const before = requests.length;
    expect(only(await verify(first, image.ref, [compiled])).passed).toBe(true);
    expect(requests.length).toBeGreaterThan(before);
    expect(written).toEqual([keyOf(compiled, { ...parseReference(image.ref), digest: image.digest })]);

    const second = new ImageVerifier({ registry, cache: new VerificationCache(), records });
    const quiet = requests.length;
    const recorded = only(await verify(second, image.ref, [compiled]));
    expect(recorded.passed).toBe(true);
    expect(requests.length, 'the registry was asked although a pass was recorded').toBe(quiet);
    // Taken from the store, not verified here: not written again.
    expect(written).toHaveLength(1);
    // Kept in memory only for what was left of its lifetime (50 ms), then asked again.
    const asked = lookups;
    await verify(second, image.ref, [compiled]);
    expect(lookups).toBe(asked);
    await new Promise((resolve) => setTimeout(resolve, 60));
    await verify(second, image.ref, [compiled]);
    expect(lookups).toBe(asked + 1);

    // Another revision (a changed policy) is another key: the store has nothing, the registry is asked.
    const changed = await policy('release', [{ key: { data: publicKey } }]);
    const third = new ImageVerifier({ registry, cache: new VerificationCache(), records });
    const again = requests.length;
    expect(only(await verify(third, image.ref, [changed])).passed).toBe(true);
    expect(requests.length).toBeGreaterThan(again);
  });

  it('a recorded failure is never taken as a pass', async () => {
    const image = await push(oci, 'team/recorded-failure');
    const compiled = await policy('release', [{ key: { data: publicKey } }]);
    const failing: PolicyCheck = {
      policy: 'release',
      passed: false,
      failure: { kind: 'policy', reason: 'recorded' },
      authorities: [],
    };
    const records: PassRecords = {
      find: () => ({ check: failing, freshForMs: 1000 }),
      passed: () => undefined,
    };
    const verifier = new ImageVerifier({ registry, cache: new VerificationCache(), records });
    const before = requests.length;
    const check = only(await verify(verifier, image.ref, [compiled]));
    expect(check).toMatchObject({ passed: false, failure: { kind: 'policy' } });
    expect(check.passed || check.failure.reason).not.toBe('recorded');
    expect(requests.length).toBeGreaterThan(before);
  });

  it('keeps each waiter on its own deadline: a short one neither cancels nor poisons shared work (issue 9, item 6)', async () => {
    const image = await push(oci, 'team/shared-deadline');
    await cosign.signLegacyKeyed(image.ref, key);
    const compiled = await policy('release', [{ key: { data: publicKey } }]);
    // A slow registry: every request waits 150 ms before it is sent.
    const slow = new RegistryClient({
      insecureHosts: [oci.host],
      fetch: async (url, init) => {
        await new Promise((resolve) => setTimeout(resolve, 150));
        return dispatchFetch(url, init);
      },
    });
    const verifier = new ImageVerifier({ registry: slow, cache: new VerificationCache() });
    const impatient = verify(verifier, image.ref, [compiled], 100);
    await new Promise((resolve) => setTimeout(resolve, 10));
    const patient = Array.from({ length: 5 }, () => verify(verifier, image.ref, [compiled], 10_000));
    const short = only(await impatient);
    expect(short).toMatchObject({ passed: false, failure: { kind: 'infrastructure' } });
    if (!short.passed) expect(short.failure.reason).toBe('verification timed out after 0.1s');
    for (const result of await Promise.all(patient)) expect(only(result).passed).toBe(true);
  });

  it('passes a cosign signature that sits beside an oversized and a tampered layer (issue 9, item 10)', async () => {
    const image = await push(plain, 'team/crowded');
    await cosign.signLegacyKeyed(image.ref, key);
    // An attacker with push access to the signature tag adds junk next to the real signature.
    const tag = `${image.digest.replace(':', '-')}.sig`;
    const base = `${plain.url}/v2/team/crowded`;
    const sig = (await (
      await fetch(`${base}/manifests/${tag}`, {
        headers: { accept: 'application/vnd.oci.image.manifest.v1+json' },
      })
    ).json()) as { layers: { mediaType: string; digest: string; size: number }[] };
    const upload = async (bytes: Buffer) => {
      const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
      const started = await fetch(`${base}/blobs/uploads/`, { method: 'POST' });
      const location = new URL(started.headers.get('location') ?? '', plain.url);
      location.searchParams.set('digest', digest);
      const put = await fetch(location, { method: 'PUT', body: bytes });
      expect(put.status).toBe(201);
      return { mediaType: 'application/vnd.dev.cosign.simplesigning.v1+json', digest, size: bytes.length };
    };
    const oversized = await upload(Buffer.alloc(2 * 1024 * 1024, 0x7b));
    const junk = await upload(Buffer.from('{"critical":"not a signature"}'));
    sig.layers = [oversized, junk, ...sig.layers];
    const put = await fetch(`${base}/manifests/${tag}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/vnd.oci.image.manifest.v1+json' },
      body: JSON.stringify(sig),
    });
    expect(put.status).toBe(201);
    const verifier = new ImageVerifier({ registry });
    const check = only(
      await verify(verifier, image.ref, [await policy('release', [{ key: { data: publicKey } }])]),
    );
    expect(check).toMatchObject({ passed: true });
    // Both bad layers are reported beside the good one.
    expect(check.authorities[0]).toMatchObject({ counts: { found: 3, verified: 1 } });
    const rejected = check.authorities[0]?.rejected.map((r) => r.error.message) ?? [];
    expect(rejected).toEqual([
      'signature layer has no dev.cosignproject.cosign/signature annotation',
      `unreadable: layer ${oversized.digest} announces 2097152 bytes; the limit is 1048576`,
    ]);
  });

  it('reports a tag or repository that does not exist as a policy failure, not an outage', async () => {
    await push(plain, 'team/exists', 'v1');
    const verifier = new ImageVerifier({ registry });
    const compiled = await policy('release', [{ key: { data: publicKey } }]);
    for (const missing of [`${plain.host}/team/exists:v404`, `${plain.host}/team/never-pushed:v1`]) {
      const check = only(await verify(verifier, missing, [compiled]));
      expect(check).toMatchObject({
        passed: false,
        failure: { kind: 'policy', reason: `${missing} does not exist` },
      });
      if (!check.passed) expect(String((check.failure.cause as Error).message)).toContain('not found');
    }
  });

  it('reports an unreachable registry as an infrastructure failure and never caches it', async () => {
    const stopped = await testbed.startRegistry({ referrers: false, group: group as Testbed.ProcessGroup });
    const client = new RegistryClient({
      insecureHosts: [stopped.host],
      retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 10 },
    });
    const image = await push(stopped, 'team/gone');
    await stopped.stop();
    const seen: CacheResult[] = [];
    const verifier = new ImageVerifier({ registry: client, onCache: (r) => seen.push(r) });
    const compiled = await policy('release', [{ key: { data: publicKey } }]);
    for (let i = 0; i < 2; i++) {
      const check = only(await verify(verifier, image.ref, [compiled], 5_000));
      expect(check).toMatchObject({ passed: false, failure: { kind: 'infrastructure' } });
    }
    expect(seen).toEqual(['miss', 'miss']);
    const byTag = only(await verify(verifier, `${stopped.host}/team/gone:v1`, [compiled], 5_000));
    expect(byTag).toMatchObject({ passed: false, failure: { kind: 'infrastructure' } });
    if (!byTag.passed)
      expect(byTag.failure.reason).toBe(`cannot resolve ${stopped.host}/team/gone:v1 to a digest`);
  }, 60_000);

  it('ends the wait for a registry that never answers at the deadline', async () => {
    const verifier = new ImageVerifier({ registry });
    const started = Date.now();
    const digest = `sha256:${'a'.repeat(64)}`;
    const check = only(
      await verify(
        verifier,
        `${silentHost}/team/slow@${digest}`,
        [await policy('release', [{ key: { data: publicKey } }])],
        1500,
      ),
    );
    expect(Date.now() - started).toBeLessThan(4000);
    expect(check).toMatchObject({
      passed: false,
      failure: { kind: 'infrastructure', reason: 'verification timed out after 1.5s' },
    });
  });
});
