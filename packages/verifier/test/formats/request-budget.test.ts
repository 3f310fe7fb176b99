// The registry requests one cold verification makes, per image shape and policy, against both real
// registries (an OCI 1.1 registry with the referrers API, CNCF distribution without it, where
// cosign keeps the referrers in the `sha256-<hex>` fallback tag), with signatures and attestations
// made by the real cosign 3. An authority without `signatureFormat` reads both formats: the legacy
// tags first, the bundle referrers only when what the tags hold does not pass, so an image with one
// format costs what it cost when that format was the only one read (issue 23).

import { join } from 'node:path';
import { parseReference } from '@signet/core';
import { dispatchFetch, RegistryClient } from '@signet/registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VerificationCache } from '../../src/cache.js';
import { ImageVerifier } from '../../src/image-verifier.js';
import { type CompiledAuthorities, compileAuthorities } from '../../src/policy/compile.js';
import { clusterImagePolicy } from '../support/policies.js';
import { ensureTestTools, loadTestbed, type Testbed } from '../support/registry-helpers.js';

const SETUP_TIMEOUT = 30 * 60_000;
const PREDICATE_TYPE = 'https://example.com/build/v1';

type Shape = 'legacy' | 'bundle' | 'both' | 'unsigned' | 'bundle-signed-and-attested';
type Policy = 'default' | 'legacy' | 'bundle' | 'two-keys' | 'attestation';

describe('registry requests of one cold verification (issue 23)', () => {
  let testbed: typeof Testbed;
  let group: Testbed.ProcessGroup | undefined;
  let runDir = '';
  let crane = '';
  let cosign: Testbed.Cosign;
  let registries: Record<'oci' | 'plain', Testbed.Registry>;
  let key: Testbed.CosignKeyPair;
  const requests: string[] = [];
  let registry: RegistryClient;
  const images = new Map<string, string>();
  const policies = new Map<Policy, CompiledAuthorities>();

  beforeAll(async () => {
    testbed = await loadTestbed();
    ({ crane } = await ensureTestTools(testbed, ['crane', 'cosign', 'registry', 'oci-registry']));
    runDir = await testbed.createRunDir('signet-verifier-budget-');
    group = new testbed.ProcessGroup({ runDir, graceMs: 2_000 });
    const started = group;
    const [oci, plain] = await Promise.all([
      testbed.startRegistry({ referrers: true, group: started }),
      testbed.startRegistry({ referrers: false, group: started }),
    ]);
    registries = { oci, plain };
    cosign = await testbed.createCosign({ workDir: runDir });
    key = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
    const other = await cosign.generateKeyPair(join(runDir, 'other'), 'pw');
    const { readFile, writeFile } = await import('node:fs/promises');
    const publicKey = await readFile(key.publicKey, 'utf8');
    const otherKey = await readFile(other.publicKey, 'utf8');
    const predicatePath = join(runDir, 'predicate.json');
    await writeFile(predicatePath, JSON.stringify({ level: 3 }));
    registry = new RegistryClient({
      insecureHosts: [oci.host, plain.host],
      fetch: (url, init) => {
        requests.push(`${init.method} ${url.pathname}`);
        return dispatchFetch(url, init);
      },
    });
    const attest = (ref: string) =>
      cosign.attest(ref, key, { predicatePath, type: PREDICATE_TYPE, format: 'bundle' });
    for (const [name, where] of Object.entries(registries)) {
      const push = async (shape: Shape) => {
        const digest = await testbed.pushRandomImage(where, `budget/${shape}`, 'v1', {
          crane,
          workDir: runDir,
        });
        const ref = `${where.host}/budget/${shape}@${digest}`;
        images.set(`${name}/${shape}`, ref);
        return ref;
      };
      await cosign.signLegacyKeyed(await push('legacy'), key);
      await cosign.signBundleKeyed(await push('bundle'), key);
      const both = await push('both');
      await cosign.signLegacyKeyed(both, key);
      await cosign.signBundleKeyed(both, key);
      await push('unsigned');
      const attested = await push('bundle-signed-and-attested');
      await cosign.signBundleKeyed(attested, key);
      await attest(attested);
    }
    const compile = async (name: Policy, authorities: unknown[]) => {
      const cip = clusterImagePolicy(authorities, { images: [{ glob: '**' }] }, name);
      policies.set(name, await compileAuthorities(cip, { revision: () => name }));
    };
    await compile('default', [{ key: { data: publicKey } }]);
    await compile('legacy', [{ key: { data: publicKey }, signatureFormat: 'legacy' }]);
    await compile('bundle', [{ key: { data: publicKey }, signatureFormat: 'bundle' }]);
    await compile('two-keys', [{ name: 'other', key: { data: otherKey } }, { key: { data: publicKey } }]);
    await compile('attestation', [
      { key: { data: publicKey }, attestations: [{ name: 'build', predicateType: PREDICATE_TYPE }] },
    ]);
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await group?.stopAll();
    const { rm } = await import('node:fs/promises');
    if (runDir !== '' && !process.env.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
  });

  /** One cold verification: whether it passed, and the requests it sent (`GET manifests`, ...). */
  async function measure(where: 'oci' | 'plain', shape: Shape, ...policy: Policy[]) {
    const image = images.get(`${where}/${shape}`) ?? '';
    const verifier = new ImageVerifier({ registry, cache: new VerificationCache() });
    const before = requests.length;
    const result = await verifier.verifyImage(
      {
        reference: parseReference(image),
        policies: policy.map((name) => policies.get(name) as CompiledAuthorities),
      },
      { signal: new AbortController().signal, deadline: Date.now() + 20_000 },
    );
    const sent = requests.slice(before);
    const check = result.checks.find((c) => !c.passed) ?? result.checks[0];
    return {
      passed: check?.passed === true,
      reason: check?.passed === false ? check.failure.reason : undefined,
      requests: sent.length,
      sent,
      kinds: sent.map((r) => r.replace(/\/v2\/budget\/[^/]+\//, ' ').replace(/sha256[:-][0-9a-f]{64}/g, 'D')),
    };
  }

  const cases: [Shape, Policy, boolean, number, number][] = [
    // shape, policy, passes, requests with the referrers API, without (fallback tag)
    ['legacy', 'default', true, 2, 2],
    ['legacy', 'legacy', true, 2, 2],
    ['bundle', 'bundle', true, 3, 4],
    ['bundle', 'default', true, 4, 5],
    ['both', 'default', true, 2, 2],
    ['unsigned', 'default', false, 2, 3],
    ['unsigned', 'bundle', false, 2, 3],
    ['bundle', 'legacy', false, 4, 5],
    ['bundle', 'two-keys', true, 4, 5],
    ['bundle-signed-and-attested', 'default', true, 4, 6],
    ['bundle-signed-and-attested', 'attestation', true, 4, 6],
  ];

  it('stays within the budget of one format for an image with one format, and says what it sent', async () => {
    const table: string[] = [];
    const measured: Record<string, [boolean, number, number]> = {};
    const expected: Record<string, [boolean, number, number]> = {};
    for (const [shape, policy, passes, withApi, withoutApi] of cases) {
      const oci = await measure('oci', shape, policy);
      const plain = await measure('plain', shape, policy);
      expect(oci.passed, `${shape}/${policy} oci: ${oci.reason}`).toBe(plain.passed);
      measured[`${shape} / ${policy}`] = [oci.passed, oci.requests, plain.requests];
      expected[`${shape} / ${policy}`] = [passes, withApi, withoutApi];
      table.push(
        `${`${shape} / ${policy}`.padEnd(44)} ${oci.passed ? 'pass' : 'deny'}  ${String(oci.requests).padStart(2)} (${oci.kinds.join(', ')})  ${String(plain.requests).padStart(2)} (${plain.kinds.join(', ')})`,
      );
    }
    process.stderr.write(
      `image / policy                               result  referrers API  fallback tag\n${table.join('\n')}\n`,
    );
    expect(measured).toEqual(expected);
  });

  it('reads each tag and the referrers listing once for every authority and policy that asks', async () => {
    for (const where of ['oci', 'plain'] as const) {
      const measured = await measure(
        where,
        'bundle-signed-and-attested',
        'two-keys',
        'attestation',
        'default',
      );
      expect(measured.passed, measured.reason).toBe(true);
      const count = (pattern: RegExp) => measured.kinds.filter((k) => pattern.test(k)).length;
      // .sig and .att once each; one listing (and on distribution one fallback tag read).
      expect([count(/D\.sig$/), count(/D\.att$/), count(/referrers\//)], where).toEqual([1, 1, 1]);
      // Nothing is asked twice.
      expect(new Set(measured.sent).size, where).toBe(measured.sent.length);
      process.stderr.write(
        `${where}: two policies, three authorities: ${measured.requests} requests (${measured.kinds.join(', ')})\n`,
      );
    }
  });
});
