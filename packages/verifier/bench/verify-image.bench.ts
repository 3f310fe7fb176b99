// `pnpm bench` (vitest bench --run): medians go into the README. A measurement, not a timed test:
// nothing here fails on speed, only on a wrong answer or a wrong number of registry requests.
//
// One real registry (CNCF distribution, no referrers API) on loopback, one image signed by the real
// cosign CLI with a key in the legacy `.sig` format, one compiled policy naming that key. Every case
// shares one RegistryClient, so connections and tokens are reused as in the webhook.
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseReference } from '@signet/core';
import { dispatchFetch, RegistryClient } from '@signet/registry';
import { afterAll, beforeAll, test } from 'vitest';
import { clusterImagePolicy } from '../test/support/policies.js';
import { ensureTestTools, loadTestbed, type Testbed } from '../test/support/registry-helpers.js';

// Times the built package, which is what production runs (turbo's bench task builds it first).
// The specifier is a variable so that typechecking does not need a build.
const built = '../dist/index.js';
const verifier: typeof import('../src/index.js') = await import(/* @vite-ignore */ built);
const { ImageVerifier, VerificationCache, compileAuthorities } = verifier;
type ImageVerifier = import('../src/index.js').ImageVerifier;
type CompiledAuthorities = import('../src/index.js').CompiledAuthorities;
type CacheResult = import('../src/index.js').CacheResult;

let group: Testbed.ProcessGroup | undefined;
let runDir = '';
let image = '';
let policy: CompiledAuthorities;
/** Every registry request the client sends, as `METHOD path`. */
const requests: string[] = [];
let registry: RegistryClient;

beforeAll(async () => {
  const testbed = await loadTestbed();
  const { crane } = await ensureTestTools(testbed, ['crane', 'cosign', 'registry']);
  runDir = await testbed.createRunDir('signet-verifier-bench-');
  group = new testbed.ProcessGroup({ runDir, graceMs: 2_000 });
  const where = await testbed.startRegistry({ referrers: false, group });
  const cosign = await testbed.createCosign({ workDir: runDir });
  const key = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
  const digest = await testbed.pushRandomImage(where, 'bench/app', 'v1', { crane, workDir: runDir });
  image = `${where.host}/bench/app@${digest}`;
  await cosign.signLegacyKeyed(image, key);
  const publicKey = await readFile(key.publicKey, 'utf8');
  const cip = clusterImagePolicy([{ name: 'release-key', key: { data: publicKey } }], {
    images: [{ glob: '**' }],
  });
  policy = await compileAuthorities(cip, { revision: () => 'release@1' });
  registry = new RegistryClient({
    insecureHosts: [where.host],
    fetch: (url, init) => {
      requests.push(`${init.method ?? 'GET'} ${url.pathname}`);
      return dispatchFetch(url, init);
    },
  });
});

afterAll(async () => {
  await group?.stopAll();
  if (runDir !== '' && !process.env.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
});

async function verifyOnce(on: ImageVerifier): Promise<void> {
  const controller = new AbortController();
  const result = await on.verifyImage(
    { reference: parseReference(image), policies: [policy] },
    { signal: controller.signal, deadline: Date.now() + 10_000 },
  );
  const check = result.checks[0];
  if (result.checks.length !== 1 || check?.passed !== true) {
    throw new Error(`expected one passing check, got ${JSON.stringify(result.checks)}`);
  }
}

/** A verifier with an empty cache: the next verification asks the registry and checks the signature. */
function coldVerifier(onCache?: (result: CacheResult) => void): ImageVerifier {
  return new ImageVerifier({ registry, cache: new VerificationCache(), ...(onCache ? { onCache } : {}) });
}

/** Milliseconds, in µs below a tenth of one. */
const ms = (value: number) => (value < 0.1 ? `${(value * 1000).toFixed(2)} µs` : `${value.toFixed(3)} ms`);

test('cold verification of a keyed legacy signature from a local registry', async ({ bench }) => {
  // The registry requests of one cold verification, for the concurrency case below.
  const before = requests.length;
  await verifyOnce(coldVerifier());
  const perVerification = requests.slice(before);
  console.log(`one cold verification: ${perVerification.length} registry requests`);
  for (const r of perVerification) console.log(`  ${r}`);

  let current = coldVerifier();
  const result = await bench(
    'cold: .sig manifest and layer from the registry, ECDSA check, policy',
    {
      beforeEach: () => {
        current = coldVerifier();
      },
    },
    () => verifyOnce(current),
  ).run({ time: 2_000 });
  console.log(`cold verification: median ${ms(result.latency.p50)} (${result.latency.samplesCount} samples)`);
});

test('verification answered from the cache', async ({ bench }) => {
  const warm = coldVerifier();
  await verifyOnce(warm);
  const before = requests.length;
  const result = await bench('cached: a pass from the VerificationCache', () => verifyOnce(warm)).run();
  if (requests.length !== before) throw new Error(`cache hits sent ${requests.length - before} requests`);
  console.log(
    `cached verification: median ${ms(result.latency.p50)} (${result.latency.samplesCount} samples)`,
  );
});

test('200 concurrent verifications of one digest share one set of registry fetches', async ({ bench }) => {
  const before = requests.length;
  await verifyOnce(coldVerifier());
  const single = requests.length - before;

  const counts = new Set<number>();
  let current = coldVerifier();
  let seen: CacheResult[] = [];
  const result = await bench(
    '200 concurrent cold verifications',
    {
      beforeEach: () => {
        seen = [];
        current = coldVerifier((r) => seen.push(r));
      },
    },
    async () => {
      const start = requests.length;
      await Promise.all(Array.from({ length: 200 }, () => verifyOnce(current)));
      counts.add(requests.length - start);
      const misses = seen.filter((r) => r === 'miss').length;
      if (misses !== 1 || seen.length !== 200)
        throw new Error(`expected 1 miss of 200, got ${seen.join(',')}`);
    },
  ).run({ time: 2_000, iterations: 20 });
  const sent = [...counts];
  if (sent.length !== 1 || sent[0] !== single) {
    throw new Error(`200 concurrent verifications sent ${sent.join(' or ')} requests; one sends ${single}`);
  }
  console.log(
    `200 concurrent verifications: ${sent[0]} registry requests (one cold verification: ${single}), ` +
      `wall time median ${ms(result.latency.p50)} (${result.latency.samplesCount} samples)`,
  );
});
