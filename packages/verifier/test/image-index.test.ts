// Multi-architecture images (issue 23, item 4): a real two-platform OCI image index built by the
// testbed with crane, signed by the real cosign 3 on the index only, with --recursive (the index
// and both platforms), on each platform only, and on one platform only; judged under each value of
// `signet.dev/index-signatures`. Without it, policy-controller's behaviour: cosign verifies the
// digest it is given, so only the index's own signature counts.

import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseReference } from '@signet/core';
import { dispatchFetch, RegistryClient } from '@signet/registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VerificationCache } from '../src/cache.js';
import { ImageVerifier } from '../src/image-verifier.js';
import { type CompiledAuthorities, compileAuthorities } from '../src/policy/compile.js';
import type { PolicyCheck } from '../src/policy/verify-policy.js';
import { clusterImagePolicy } from './support/policies.js';
import { ensureTestTools, loadTestbed, type Testbed } from './support/registry-helpers.js';

const SETUP_TIMEOUT = 30 * 60_000;
const MODES = ['index', 'platforms', 'index-or-platforms', 'index-and-platforms'] as const;
type Mode = (typeof MODES)[number] | 'unset';
type Shape = 'index-only' | 'recursive' | 'platforms-only' | 'amd64-only' | 'single-image';

describe('image indexes signed by the real cosign (issue 23, item 4)', () => {
  let testbed: typeof Testbed;
  let group: Testbed.ProcessGroup | undefined;
  let runDir = '';
  let oci: Testbed.Registry;
  let plain: Testbed.Registry;
  let crane = '';
  let cosign: Testbed.Cosign;
  let key: Testbed.CosignKeyPair;
  let publicKey = '';
  const requests: string[] = [];
  let registry: RegistryClient;
  const images = new Map<Shape, { ref: string; platforms: { platform: string; digest: string }[] }>();
  const policies = new Map<Mode, CompiledAuthorities>();

  beforeAll(async () => {
    testbed = await loadTestbed();
    ({ crane } = await ensureTestTools(testbed, ['crane', 'cosign', 'registry', 'oci-registry']));
    runDir = await testbed.createRunDir('signet-verifier-index-');
    group = new testbed.ProcessGroup({ runDir, graceMs: 2_000 });
    const started = group;
    [oci, plain] = await Promise.all([
      testbed.startRegistry({ referrers: true, group: started }),
      testbed.startRegistry({ referrers: false, group: started }),
    ]);
    cosign = await testbed.createCosign({ workDir: runDir });
    key = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
    publicKey = await readFile(key.publicKey, 'utf8');
    registry = new RegistryClient({
      insecureHosts: [oci.host, plain.host],
      fetch: (url, init) => {
        requests.push(`${init.method} ${url.pathname}`);
        return dispatchFetch(url, init);
      },
    });
    // cosign 3's defaults: Sigstore bundles as OCI referrers.
    const index = async (shape: Shape) => {
      const pushed = await testbed.pushImageIndex(oci, `multi/${shape}`, 'v1', { crane, workDir: runDir });
      const ref = `${oci.host}/multi/${shape}@${pushed.digest}`;
      images.set(shape, { ref, platforms: [...pushed.platforms] });
      return { ref, platformRefs: pushed.platforms.map((p) => `${oci.host}/multi/${shape}@${p.digest}`) };
    };
    await cosign.signBundleKeyed((await index('index-only')).ref, key);
    await cosign.signBundleKeyed((await index('recursive')).ref, key, { recursive: true });
    for (const platform of (await index('platforms-only')).platformRefs)
      await cosign.signBundleKeyed(platform, key);
    const [amd64] = (await index('amd64-only')).platformRefs;
    await cosign.signBundleKeyed(amd64 as string, key);
    const single = await testbed.pushRandomImage(oci, 'multi/single', 'v1', { crane, workDir: runDir });
    images.set('single-image', { ref: `${oci.host}/multi/single@${single}`, platforms: [] });
    await cosign.signBundleKeyed(`${oci.host}/multi/single@${single}`, key);
    for (const mode of ['unset', ...MODES] as const) policies.set(mode, await policy(mode));
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await group?.stopAll();
    if (runDir !== '' && !process.env.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
  });

  async function policy(mode: Mode): Promise<CompiledAuthorities> {
    const cip = clusterImagePolicy(
      [{ name: 'release-key', key: { data: publicKey } }],
      { images: [{ glob: '**' }] },
      mode,
    );
    const annotated =
      mode === 'unset'
        ? cip
        : { ...cip, metadata: { ...cip.metadata, annotations: { 'signet.dev/index-signatures': mode } } };
    return compileAuthorities(annotated, { revision: () => mode });
  }

  async function check(image: string, mode: Mode): Promise<PolicyCheck> {
    const verifier = new ImageVerifier({ registry, cache: new VerificationCache() });
    const result = await verifier.verifyImage(
      {
        reference: parseReference(image),
        policies: [policies.get(mode) as CompiledAuthorities],
      },
      { signal: new AbortController().signal, deadline: Date.now() + 20_000 },
    );
    return result.checks[0] as PolicyCheck;
  }

  const outcomes: [Shape, Record<Mode, boolean>][] = [
    [
      'index-only',
      {
        unset: true,
        index: true,
        platforms: false,
        'index-or-platforms': true,
        'index-and-platforms': false,
      },
    ],
    [
      'recursive',
      { unset: true, index: true, platforms: true, 'index-or-platforms': true, 'index-and-platforms': true },
    ],
    [
      'platforms-only',
      {
        unset: false,
        index: false,
        platforms: true,
        'index-or-platforms': true,
        'index-and-platforms': false,
      },
    ],
    [
      'amd64-only',
      {
        unset: false,
        index: false,
        platforms: false,
        'index-or-platforms': false,
        'index-and-platforms': false,
      },
    ],
    [
      'single-image',
      { unset: true, index: true, platforms: true, 'index-or-platforms': true, 'index-and-platforms': true },
    ],
  ];

  it('admits what each policy asks for, and only that', async () => {
    const measured: Record<string, Record<string, boolean>> = {};
    const expected: Record<string, Record<string, boolean>> = {};
    for (const [shape, wanted] of outcomes) {
      const image = images.get(shape)?.ref ?? '';
      measured[shape] = {};
      for (const mode of ['unset', ...MODES] as const)
        (measured[shape] as Record<string, boolean>)[mode] = (await check(image, mode)).passed;
      expected[shape] = wanted;
    }
    expect(measured).toEqual(expected);
  });

  it('says which platform fails, and that neither the index nor each platform passes', async () => {
    const amd64 = images.get('amd64-only');
    const arm64 = amd64?.platforms[1];
    const platforms = await check(amd64?.ref ?? '', 'platforms');
    expect(!platforms.passed && platforms.failure).toMatchObject({
      kind: 'policy',
      reason: `platform linux/arm64 (${arm64?.digest}): no signature found`,
    });
    const either = await check(amd64?.ref ?? '', 'index-or-platforms');
    expect(!either.passed && either.failure.reason).toBe(
      `neither the index nor each of its platforms passes: the index: no signature found; platform linux/arm64 (${arm64?.digest}): no signature found`,
    );
    const both = await check(images.get('platforms-only')?.ref ?? '', 'index-and-platforms');
    expect(!both.passed && both.failure.reason).toBe('the index: no signature found');
  });

  it('reads the index manifest only for a policy that judges platforms', async () => {
    const image = images.get('index-only')?.ref ?? '';
    const digest = image.split('@')[1] as string;
    const sent = async (mode: Mode) => {
      const before = requests.length;
      await check(image, mode);
      return requests.slice(before);
    };
    const byDefault = await sent('unset');
    expect(byDefault.filter((r) => r.endsWith(`/manifests/${digest}`))).toEqual([]);
    // The index, then per platform what one image costs (its .sig tag, its referrers listing).
    const perPlatform = await sent('platforms');
    expect(perPlatform.filter((r) => r.endsWith(`/manifests/${digest}`))).toEqual([
      `GET /v2/multi/index-only/manifests/${digest}`,
    ]);
    expect(perPlatform.filter((r) => r.includes('/referrers/'))).toHaveLength(2);
  });

  it('judges a --recursive legacy signature on a registry without the referrers API', async () => {
    const pushed = await testbed.pushImageIndex(plain, 'multi/legacy', 'v1', { crane, workDir: runDir });
    await cosign.signLegacyKeyed(`${plain.host}/multi/legacy@${pushed.digest}`, key, { recursive: true });
    for (const mode of ['unset', ...MODES] as const)
      expect((await check(`${plain.host}/multi/legacy@${pushed.digest}`, mode)).passed, mode).toBe(true);
  });
});
