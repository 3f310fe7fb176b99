// CUE and Rego through the whole webhook: policies from YAML (one from a ConfigMap), compiled with
// the real engines, Pod CREATE reviews over real HTTPS, deny lines as users read them; the
// engines load only when a policy needs them and compile an unchanged policy once.
// Upstream's spec.policy files (policy-controller v0.15.1's test/testdata, from its Go module)
// are used as written, but for their image globs, which name upstream's registry.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type * as Testbed from '@signet/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import {
  createCertificateAuthority,
  type IssuedCertificate,
  issueServingCertificate,
} from '../../src/certificates.js';
import { serveConfigFrom } from '../../src/commands/serve-config.js';
import { createLogger } from '../../src/logger.js';
import { SignetMetrics } from '../../src/metrics.js';
import { WebhookPolicyEngines } from '../../src/policy/policy-engines.js';
import { parsePolicyYaml } from '../../src/policy/policy-file.js';
import { compileSnapshot } from '../../src/policy/policy-store.js';
import { type RunningSignet, startSignet } from '../../src/signet.js';
import { LogCapture, post, reviewFixture } from '../helpers.js';

let testbed: typeof Testbed;
let group: Testbed.ProcessGroup | undefined;
let runDir = '';
let ca: IssuedCertificate;
let signet: RunningSignet;
let base = '';
let attested = '';
let wrongly = '';
let plainImage = '';
let engines: WebhookPolicyEngines;
const logs = new LogCapture();
const logger = createLogger({ destination: logs });

/** Upstream's policy file with its images glob pointed at `glob`. */
async function upstreamPolicy(upstream: string, file: string, name: string, glob: string): Promise<string> {
  const text = await readFile(join(upstream, 'test/testdata/policy-controller/e2e', file), 'utf8');
  const object = parseAllDocuments(text)[0]?.toJS() as {
    metadata: { name: string };
    spec: { images: unknown };
  };
  object.metadata.name = name;
  object.spec.images = [{ glob }];
  return stringify(object);
}

beforeAll(async () => {
  testbed = await import('@signet/testbed');
  const { crane } = await testbed.ensureTools(['crane', 'cosign', 'registry'], {
    onProgress: (event) => console.log(`testbed: ${event.message}`),
  });
  const upstream = await testbed.policyControllerModule();
  runDir = await testbed.createRunDir('signet-webhook-languages-');
  group = new testbed.ProcessGroup({ runDir, graceMs: 2000 });
  const registry = await testbed.startRegistry({ referrers: false, group });
  const push = async (repo: string) =>
    `${registry.host}/${repo}@${await testbed.pushRandomImage(registry, repo, 'v1', { crane, workDir: runDir })}`;
  const cosign = await testbed.createCosign({ workDir: runDir });
  const key = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
  attested = await push('attested/app');
  wrongly = await push('attested/other');
  plainImage = await push('plain/app');
  const predicate = join(runDir, 'predicate');
  await writeFile(predicate, 'foobar e2e test');
  await cosign.attest(attested, key, { predicatePath: predicate, type: 'custom', format: 'legacy' });
  await writeFile(predicate, 'something else');
  await cosign.attest(wrongly, key, { predicatePath: predicate, type: 'custom', format: 'legacy' });
  const publicKey = (await readFile(key.publicKey, 'utf8')).trim().split('\n').join('\n            ');
  const yaml = [
    `
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: custom-cue }
spec:
  images: [{ glob: "${registry.host}/attested/**" }]
  authorities:
    - name: release-key
      key:
        data: |
            ${publicKey}
      attestations:
        - name: custom-match-predicate
          predicateType: custom
          policy:
            type: cue
            data: |
              predicateType: "https://cosign.sigstore.dev/attestation/v1"
              predicate: Data: "foobar e2e test"
---
apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: custom-rego }
spec:
  images: [{ glob: "${registry.host}/attested/**" }]
  authorities:
    - key:
        data: |
            ${publicKey}
      attestations:
        - name: custom-rego
          predicateType: https://cosign.sigstore.dev/attestation/v1
          policy:
            type: rego
            configMapRef: { name: policies, key: custom.rego }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: policies, namespace: signet-system }
data:
  custom.rego: |
    package sigstore
    default isCompliant = false
    isCompliant {
      input.predicate.Data == "foobar e2e test"
    }
`,
    await upstreamPolicy(
      upstream,
      'cip-include-objectmeta.yaml',
      'include-objectmeta',
      `${registry.host}/plain/**`,
    ),
    await upstreamPolicy(upstream, 'cip-include-spec.yaml', 'include-spec', `${registry.host}/plain/**`),
    await upstreamPolicy(
      upstream,
      'cip-include-typemeta.yaml',
      'include-typemeta',
      `${registry.host}/plain/**`,
    ),
  ].join('\n---\n');
  expect(parsePolicyYaml(yaml, 'signet-system').problems).toEqual([]);
  await writeFile(join(runDir, 'policies.yaml'), yaml);
  ca = await createCertificateAuthority('signet-test', 1);
  const serving = await issueServingCertificate(ca, ['127.0.0.1'], 1);
  await writeFile(join(runDir, 'tls.crt'), serving.cert);
  await writeFile(join(runDir, 'tls.key'), serving.key);
  // The same composition root as `signet serve`, from the same flags.
  const config = serveConfigFrom(
    {
      port: '0',
      'ops-port': '0',
      host: '127.0.0.1',
      namespace: 'signet-system',
      'policy-file': [join(runDir, 'policies.yaml')],
      'tls-cert-file': join(runDir, 'tls.crt'),
      'tls-key-file': join(runDir, 'tls.key'),
      'insecure-registry': [registry.host],
    },
    {},
  );
  signet = await startSignet(config, { logger, metrics: new SignetMetrics({ defaultMetrics: false }) });
  expect([...(signet.store.current?.broken.values() ?? [])]).toEqual([]);
  expect(
    logs.lines
      .filter((l) => l.msg === 'policy engine started')
      .map((l) => l.language)
      .sort(),
  ).toEqual(['cue', 'rego']);
  base = `https://127.0.0.1:${signet.servers.port}`;
  engines = new WebhookPolicyEngines(logger);
}, 30 * 60_000);

afterAll(async () => {
  await signet?.stop(1000);
  await engines?.close();
  await group?.stopAll();
  if (runDir) await rm(runDir, { recursive: true, force: true });
});

/** pod-create.json (a real-shaped Pod CREATE) for `image`, with `labels` and serviceAccount set as the API server sets it. */
function podReview(image: string, labels: Record<string, string>): string {
  const review = JSON.parse(reviewFixture('pod-create.json'));
  const pod = review.request.object;
  pod.metadata.labels = labels;
  pod.spec.containers = [{ ...pod.spec.containers[0], image }];
  pod.spec.initContainers = undefined;
  pod.spec.serviceAccountName = 'default';
  pod.spec.serviceAccount = 'default';
  return JSON.stringify(review);
}

async function admit(body: string) {
  const answer = await post(`${base}/validate?timeout=10s`, body, ca.cert);
  expect(answer.status).toBe(200);
  return answer.json().response as { allowed: boolean; status?: { message: string } };
}

describe('CUE and Rego through the webhook', () => {
  it('admits a Pod whose attestation satisfies the CUE and the Rego (ConfigMap) policy', async () => {
    expect(await admit(podReview(attested, {}))).toMatchObject({ allowed: true });
  });

  it('denies a Pod whose attestation does not, naming the policy, attestation and the conflict', async () => {
    const answer = await admit(podReview(wrongly, {}));
    expect(answer.allowed).toBe(false);
    const message = answer.status?.message ?? '';
    expect(message).toContain(`spec.containers[0].image ${wrongly}: policy "custom-cue" (enforce): `);
    expect(message).toContain(
      'failed evaluating cue policy for custom-match-predicate: failed to evaluate the policy with error: predicate.Data: conflicting values "something else" and "foobar e2e test"',
    );
    expect(message).toContain('policy "custom-rego" (enforce)');
    expect(message).toContain(
      "failed evaluating rego policy for type custom-rego: policy is not compliant for query 'isCompliant = data.sigstore.isCompliant'",
    );
  });

  it("evaluates upstream's include* spec.policies on the Pod: labels, spec and kind", async () => {
    expect(await admit(podReview(plainImage, { foo: 'bar' }))).toMatchObject({ allowed: true });
    const denied = await admit(podReview(plainImage, { foo: 'baz' }));
    expect(denied.allowed).toBe(false);
    expect(denied.status?.message).toContain(
      'policy "include-objectmeta" (enforce): spec.policy failed: failed evaluating cue policy for ClusterImagePolicy: failed to evaluate the policy with error: metadata.labels.foo: conflicting values "baz" and "bar"',
    );
  });

  it('compiles an unchanged policy once across snapshots, and keeps only what the snapshots in use need', async () => {
    expect(engines.loaded).toBe(false);
    const first = engines.session();
    const a = await first.compile('cue', 'a: 1');
    expect(await first.compile('cue', 'a: 1')).toBe(a);
    engines.installed(first);
    // A compile that was not installed (a newer view came first) leaves nothing of its own: with
    // policy files no second snapshot comes to release it.
    const superseded = engines.session();
    for (let i = 0; i < 5; i++) await superseded.compile('cue', `b: ${i}`);
    expect(await superseded.compile('cue', 'a: 1')).toBe(a);
    expect(engines.programs).toBe(6);
    engines.discard(superseded);
    expect(engines.programs).toBe(1);
    expect(await engines.retained()).toBe(1);
    // The installed snapshot and the one before it keep theirs; older ones go.
    const second = engines.session();
    expect(await second.compile('cue', 'a: 1')).toBe(a);
    engines.installed(second);
    const third = engines.session();
    const c = await third.compile('cue', 'c: 1');
    engines.installed(third);
    expect(engines.programs).toBe(2);
    const fourth = engines.session();
    expect(await fourth.compile('cue', 'c: 1')).toBe(c);
    engines.installed(fourth);
    expect(engines.programs).toBe(1);
    expect(await engines.retained()).toBe(1);
    const again = await engines.session().compile('cue', 'a: 1');
    expect(again).not.toBe(a);
    expect(await again.evaluate({ a: 1 })).toEqual({ passed: true });
    await expect(engines.compile('cue', 'a: [')).rejects.toThrow(/does not compile|failed to compile/);
  });

  it('loads no engine for a set of CEL and signature policies', async () => {
    const idle = new WebhookPolicyEngines(logger);
    const policies = parsePolicyYaml(
      'apiVersion: policy.sigstore.dev/v1beta1\nkind: ClusterImagePolicy\nmetadata: { name: p }\nspec:\n  images: [{ glob: "**" }]\n  authorities: [{ static: { action: pass } }]\n  policy: { type: cel, data: "true" }\n',
      'signet-system',
    );
    const { snapshot } = await compileSnapshot(policies, {
      namespace: 'signet-system',
      engines: idle,
    });
    expect(snapshot?.broken.size).toBe(0);
    expect(idle.loaded).toBe(false);
    await idle.close();
  });
});
