// `pnpm bench`: warm evaluation of policy-controller's own CUE and Rego policies (read from its Go
// module, v0.15.1) over the documents upstream gives them, medians against a baseline measured in
// the same run (an empty CUE policy: the cost of one round trip to the engine's worker). Also
// reports each engine's cold start and the memory the engines take. Nothing fails on speed, only
// on a wrong verdict.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type * as Testbed from '@signet/testbed';
import { afterAll, beforeAll, test } from 'vitest';
import { parseAllDocuments } from 'yaml';

// Times the built package, which is what production runs (turbo's bench task builds it first).
const built = '../dist/index.js';
const engines_: typeof import('../src/index.js') = await import(/* @vite-ignore */ built);
type EnginePolicy = import('../src/index.js').EnginePolicy;

const engines = engines_.createPolicyEngines();
let upstream = '';

const CUSTOM = {
  _type: 'https://in-toto.io/Statement/v0.1',
  predicateType: 'https://cosign.sigstore.dev/attestation/v1',
  subject: [{ name: 'registry.local/demo', digest: { sha256: 'ab'.repeat(32) } }],
  predicate: { Data: 'foobar e2e test', Timestamp: '2026-12-01T10:00:00Z' },
};

interface Case {
  readonly name: string;
  readonly policy: EnginePolicy;
  readonly document: unknown;
}
const cases: Case[] = [];
let baseline: EnginePolicy;

/** `spec.authorities[a].attestations[i].policy.data` (or `spec.policy.data`) of an upstream file. */
async function upstreamData(file: string, path: (spec: Record<string, never>) => unknown): Promise<string> {
  const text = await readFile(join(upstream, file), 'utf8');
  const object = parseAllDocuments(text)[0]?.toJS() as { spec: Record<string, never> };
  return path(object.spec) as string;
}

const ms = (value: number) => (value < 0.1 ? `${(value * 1000).toFixed(1)} µs` : `${value.toFixed(3)} ms`);

beforeAll(async () => {
  const testbed: typeof Testbed = await import('@signet/testbed');
  upstream = await testbed.policyControllerModule();
  const e2e = 'test/testdata/policy-controller/e2e';
  for (const language of ['cue', 'rego'] as const) {
    const started = performance.now();
    const rssBefore = process.memoryUsage().rss;
    await engines.compile(language, language === 'cue' ? 'a: _' : 'package sigstore\nisCompliant = true');
    const rss = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    console.log(
      `${language} engine cold start (load, compile the module, start the worker, first compile): ${ms(performance.now() - started)}, RSS +${rss.toFixed(0)} MiB`,
    );
  }
  baseline = await engines.compile('cue', '{}');
  const two = await upstreamData(
    `${e2e}/cip-requires-two-signatures-and-two-attestations.yaml`,
    (s) => s.policy,
  );
  const twoData = (two as unknown as { data: string }).data;
  type Spec = { authorities: { attestations?: { policy?: { data?: string } }[] }[] };
  const attestation = (file: string, a = 0, i = 0) =>
    upstreamData(file, (s) => (s as unknown as Spec).authorities[a]?.attestations?.[i]?.policy?.data);
  const vuln = JSON.parse(
    await readFile(join(upstream, 'test/testdata/attestations/vuln-predicate.json'), 'utf8'),
  );
  const sources: [string, 'cue' | 'rego', string, unknown][] = [
    [
      'CUE custom predicate (cip-keyless-with-attestations)',
      'cue',
      await attestation(`${e2e}/cip-keyless-with-attestations.yaml`),
      CUSTOM,
    ],
    [
      'CUE time bounds on a vuln scan (cip-requires-two-...)',
      'cue',
      await attestation(`${e2e}/cip-requires-two-signatures-and-two-attestations.yaml`, 0, 1),
      { ...CUSTOM, predicateType: 'https://cosign.sigstore.dev/attestation/vuln/v1', predicate: vuln },
    ],
    [
      'Rego custom predicate (cip-keyless-with-attestations-rego)',
      'rego',
      await attestation(`${e2e}/cip-keyless-with-attestations-rego.yaml`),
      CUSTOM,
    ],
    [
      'CUE spec.policy over authorityMatches (cip-requires-two-...)',
      'cue',
      twoData,
      {
        authorityMatches: {
          keyatt: { attestations: { 'custom-match-predicate': [{ predicateType: CUSTOM.predicateType }] } },
          keylessatt: { attestations: { customkeyless: [{}], vulnkeyless: [{}] } },
          keysignature: { signatures: [{}] },
          keylesssignature: { signatures: [{ subject: 's', issuer: 'i' }] },
        },
      },
    ],
  ];
  for (const [name, language, source, document] of sources) {
    const policy = await engines.compile(language, source);
    const outcome = await policy.evaluate(document);
    if (!outcome.passed) throw new Error(`${name}: expected a pass, got ${outcome.reason}`);
    cases.push({ name, policy, document });
  }
}, 10 * 60_000);

afterAll(() => engines.close());

test('warm evaluation of upstream policies', async ({ bench }) => {
  const base = await bench('baseline: an empty CUE policy (one worker round trip)', () =>
    baseline.evaluate(CUSTOM).then(() => undefined),
  ).run({ time: 1_000 });
  console.log(`baseline (empty CUE policy): median ${ms(base.latency.p50)}`);
  for (const { name, policy, document } of cases) {
    // The document is serialised as the verifier does, once per evaluation.
    const result = await bench(name, async () => {
      const outcome = await policy.evaluate(document);
      if (!outcome.passed) throw new Error(`${name} failed`);
    }).run({ time: 1_000 });
    console.log(
      `${name}: median ${ms(result.latency.p50)} (${(result.latency.p50 / base.latency.p50).toFixed(1)}x baseline, ${result.latency.samplesCount} samples)`,
    );
  }
  const usage = process.memoryUsage();
  console.log(
    `after the runs: RSS ${(usage.rss / 2 ** 20).toFixed(0)} MiB, JS heap ${(usage.heapUsed / 2 ** 20).toFixed(0)} MiB`,
  );
});
