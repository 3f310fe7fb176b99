// policy-controller's own CUE and Rego policies (its test/testdata and examples, read at test time
// from its Go module, v0.15.1, in the module cache), evaluated by the real engines over real
// attestations made by the real cosign CLI on real registries: the passing and the failing cases
// of upstream's e2e scripts, with the outcome (and, where the script asserts one, the error text)
// upstream gets.
//
// One adaptation, because no Fulcio or Rekor runs here: an upstream `keyless` authority is given
// cosign key A and a `key` authority key B (what signs stands in for who signs), and `ctlog` is
// dropped (nothing is uploaded to a log). Everything the policies say is used as written.
import { createHash } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import { parseReference } from '@signet/core';
import {
  type ClusterImagePolicy,
  parseClusterImagePolicy,
  parsePolicyControllerConfig,
} from '@signet/k8s-types';
import { createPolicyEngines, type PolicyEngines } from '@signet/policy-engines';
import { RegistryClient } from '@signet/registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ImageVerifier } from '../src/image-verifier.js';
import { type CompiledAuthorities, compileAuthorities } from '../src/policy/compile.js';
import { remotePolicyFetcher } from '../src/policy/remote-policy.js';
import type { PolicyCheck, SpecPolicyInputs } from '../src/policy/verify-policy.js';
import { listenInRange } from './support/ports.js';
import { ensureTestTools, loadTestbed, type Testbed } from './support/registry-helpers.js';

const SETUP_TIMEOUT = 30 * 60_000;

describe("policy-controller's CUE and Rego policies on real cosign attestations", () => {
  let testbed: typeof Testbed;
  let group: Testbed.ProcessGroup | undefined;
  let runDir = '';
  let upstream = '';
  let plain: Testbed.Registry;
  let oci: Testbed.Registry;
  let crane: string;
  let cosign: Testbed.Cosign;
  let keyA: Testbed.CosignKeyPair;
  let keyB: Testbed.CosignKeyPair;
  let publicA = '';
  let publicB = '';
  let engines: PolicyEngines;
  let verifier: ImageVerifier;

  beforeAll(async () => {
    testbed = await loadTestbed();
    ({ crane } = await ensureTestTools(testbed, ['crane', 'cosign', 'registry', 'oci-registry']));
    upstream = await testbed.policyControllerModule();
    runDir = await testbed.createRunDir('signet-upstream-policies-');
    group = new testbed.ProcessGroup({ runDir, graceMs: 2_000 });
    const started = group;
    [plain, oci] = await Promise.all([
      testbed.startRegistry({ referrers: false, group: started }),
      testbed.startRegistry({ referrers: true, group: started }),
    ]);
    cosign = await testbed.createCosign({ workDir: runDir });
    keyA = await cosign.generateKeyPair(join(runDir, 'a'), 'pw');
    keyB = await cosign.generateKeyPair(join(runDir, 'b'), 'pw');
    publicA = await readFile(keyA.publicKey, 'utf8');
    publicB = await readFile(keyB.publicKey, 'utf8');
    engines = createPolicyEngines();
    verifier = new ImageVerifier({ registry: new RegistryClient({ insecureHosts: [plain.host, oci.host] }) });
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await engines?.close();
    await group?.stopAll();
    if (runDir !== '' && !process.env.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
  });

  /** Every ClusterImagePolicy in an upstream YAML file, parsed as the webhook parses them. */
  async function upstreamPolicies(path: string): Promise<ClusterImagePolicy[]> {
    const text = await readFile(join(upstream, path), 'utf8');
    return parseAllDocuments(text)
      .map((document) => document.toJS() as Record<string, unknown> | null)
      .filter((object): object is Record<string, unknown> => object?.kind === 'ClusterImagePolicy')
      .map((object) => parseClusterImagePolicy(object));
  }

  /** The one policy an upstream e2e script applies inline (`kubectl apply -f - <<EOF`). */
  async function inlinePolicy(script: string): Promise<ClusterImagePolicy> {
    const text = await readFile(join(upstream, script), 'utf8');
    const match = /kubectl apply -f - <<EOF\n([\s\S]*?)\nEOF/.exec(text);
    if (!match?.[1]) throw new Error(`${script} applies no inline policy`);
    return parseClusterImagePolicy(parseAllDocuments(match[1])[0]?.toJS());
  }

  /** The errors an upstream e2e script expects (`expected_error='...'`), in order. */
  async function expectedErrors(script: string): Promise<string[]> {
    const text = await readFile(join(upstream, script), 'utf8');
    return [...text.matchAll(/expected_error='([^']*)'/g)].map((m) => m[1] as string);
  }

  /** Keyless authorities verify with key A, key authorities with key B; no transparency log here. */
  function adapted(cip: ClusterImagePolicy): ClusterImagePolicy {
    const authorities = cip.spec.authorities.map((authority) => {
      const { keyless, key, ctlog, ...rest } = authority;
      void ctlog;
      if (keyless !== undefined) return { ...rest, key: { data: publicA } };
      if (key !== undefined) return { ...rest, key: { data: publicB } };
      return rest;
    });
    return { ...cip, spec: { ...cip.spec, authorities } };
  }

  let revisions = 0;
  async function compiled(cip: ClusterImagePolicy): Promise<CompiledAuthorities> {
    const revision = `${cip.metadata.name}@${++revisions}`;
    return compileAuthorities(adapted(cip), { engines, revision: () => revision });
  }

  let checks = 0;
  /** One verification; a new revision each time, so that a cached pass never answers for new attestations. */
  async function check(image: string, policy: CompiledAuthorities, inputs: SpecPolicyInputs = {}) {
    const fresh = { ...policy, revision: `${policy.revision}#${++checks}` };
    const result = await verifier.verifyImage(
      { reference: parseReference(image), policies: [fresh] },
      { signal: new AbortController().signal, deadline: Date.now() + 30_000, specInputs: inputs },
    );
    return result.checks[0] as PolicyCheck;
  }

  /** The deny reason, with every cause, as the webhook's deny line shows it. */
  function reasonOf(result: PolicyCheck): string {
    expect(result.passed).toBe(false);
    if (result.passed) return '';
    const causes: string[] = [];
    const walk = (value: unknown) => {
      if (value instanceof AggregateError) value.errors.forEach(walk);
      else if (value instanceof Error) {
        causes.push(value.message);
        walk(value.cause);
      }
    };
    walk(result.failure.cause);
    const authorityReasons = result.authorities.flatMap((a) => (a.passed ? [] : [a.failure.reason]));
    return [result.failure.reason, ...authorityReasons, ...causes].join(' | ');
  }

  async function push(where: Testbed.Registry, repository: string) {
    const digest = await testbed.pushRandomImage(where, repository, 'v1', { crane, workDir: runDir });
    return `${where.host}/${repository}@${digest}`;
  }

  let predicates = 0;
  /** `cosign attest` of `content` (written to a file, as upstream's scripts do) with `type`. */
  async function attest(
    image: string,
    key: Testbed.CosignKeyPair,
    type: string,
    content: string | { file: string },
    format: Testbed.SignatureFormat = 'legacy',
  ) {
    let predicatePath: string;
    if (typeof content === 'string') {
      predicatePath = join(runDir, `predicate-${++predicates}`);
      await writeFile(predicatePath, content);
    } else predicatePath = content.file;
    await cosign.attest(image, key, { predicatePath, type, format });
  }

  it('cip-keyless-with-attestations (CUE) and its Rego twin: no attestation, a wrong one, the right one', async () => {
    const [cue] = await upstreamPolicies(
      'test/testdata/policy-controller/e2e/cip-keyless-with-attestations.yaml',
    );
    const [rego] = await upstreamPolicies(
      'test/testdata/policy-controller/e2e/cip-keyless-with-attestations-rego.yaml',
    );
    expect(cue?.spec.authorities[0]?.attestations?.[0]?.policy?.type).toBe('cue');
    expect(rego?.spec.authorities[0]?.attestations?.[0]?.policy?.type).toBe('rego');
    const policies = [await compiled(cue as ClusterImagePolicy), await compiled(rego as ClusterImagePolicy)];
    const image = await push(plain, 'demo/keyless-attestations');
    await cosign.signLegacyKeyed(image, keyA);
    // Signed, no attestation: upstream's 'no matching attestations'.
    for (const policy of policies)
      expect(reasonOf(await check(image, policy))).toContain('no attestation found');
    await attest(image, keyA, 'custom', 'something else');
    expect(reasonOf(await check(image, policies[0] as CompiledAuthorities))).toContain(
      'failed evaluating cue policy for custom-match-predicate: failed to evaluate the policy with error: predicate.Data: conflicting values "something else" and "foobar e2e test"',
    );
    expect(reasonOf(await check(image, policies[1] as CompiledAuthorities))).toContain(
      "failed evaluating rego policy for type custom-match-predicate: policy is not compliant for query 'isCompliant = data.sigstore.isCompliant'",
    );
    // echo -n 'foobar e2e test' > ./predicate-file-custom; cosign attest --type custom
    await attest(image, keyA, 'custom', 'foobar e2e test');
    for (const policy of policies) expect(await check(image, policy)).toMatchObject({ passed: true });
  });

  it('cip-key-with-attestations: the keyless attestation does not satisfy the key authority; a key attestation does', async () => {
    const [policy] = await upstreamPolicies(
      'test/testdata/policy-controller/e2e/cip-key-with-attestations.yaml',
    );
    const [noRekor] = await upstreamPolicies(
      'test/testdata/policy-controller/e2e/cip-key-with-attestations-no-rekor.yaml',
    );
    const compiledPolicies = [
      await compiled(policy as ClusterImagePolicy),
      await compiled(noRekor as ClusterImagePolicy),
    ];
    const image = await push(plain, 'demo/key-attestations');
    await cosign.signLegacyKeyed(image, keyA);
    await attest(image, keyA, 'custom', 'foobar e2e test');
    for (const p of compiledPolicies) {
      expect(reasonOf(await check(image, p))).toMatch(/no valid attestation: 1 found, 0 verified/);
    }
    await attest(image, keyB, 'custom', 'foobar key e2e test');
    for (const p of compiledPolicies) expect(await check(image, p)).toMatchObject({ passed: true });
  });

  it('cip-requires-two-signatures-and-two-attestations (and its -rego file): the spec-level CUE policy over authorityMatches', async () => {
    // Upstream's script expects 'authorityMatches.keylessattMinAttestations' while the vuln
    // attestation is missing, but exits before that check (its bug 130): an authority that fails
    // is absent from authorityMatches, the CUE reference to it is incomplete, and the policy
    // passes. The real engine gives Signet that same outcome.
    const script = 'test/e2e_test_cluster_image_policy_with_attestations.sh';
    expect(await readFile(join(upstream, script), 'utf8')).toContain('Exiting early due to bug 130');
    const files = ['', '-rego'].map(
      (suffix) =>
        `test/testdata/policy-controller/e2e/cip-requires-two-signatures-and-two-attestations${suffix}.yaml`,
    );
    const policies = await Promise.all(
      files.map(async (file) => compiled((await upstreamPolicies(file))[0] as ClusterImagePolicy)),
    );
    const image = await push(plain, 'demo/two-and-two');
    await cosign.signLegacyKeyed(image, keyA);
    await cosign.signLegacyKeyed(image, keyB);
    await attest(image, keyA, 'custom', 'foobar e2e test');
    await attest(image, keyB, 'custom', 'foobar key e2e test');
    for (const policy of policies) {
      const result = await check(image, policy);
      expect(result).toMatchObject({ passed: true });
      expect(result.authorities.find((a) => a.authority === 'keylessatt')).toMatchObject({ passed: false });
    }
    const vuln = { file: join(upstream, 'test/testdata/attestations/vuln-predicate.json') };
    await attest(image, keyA, 'vuln', vuln);
    for (const policy of policies) {
      const result = await check(image, policy);
      expect(result).toMatchObject({ passed: true });
      expect(result.authorities.every((a) => a.passed)).toBe(true);
    }
    // A second keyed signature (another payload, so cosign keeps both): list.MaxItems(1) refuses it.
    await cosign.run(
      [
        'sign',
        ...['--key', keyB.privateKey, '--tlog-upload=false', '--use-signing-config=false'],
        ...['--new-bundle-format=false', '--yes', '--allow-http-registry', '--allow-insecure-registry'],
        ...['-a', 'second=signature', image],
      ],
      keyB.password,
    );
    for (const policy of policies) {
      const reason = reasonOf(await check(image, policy));
      expect(reason).toContain(
        'spec.policy failed: failed evaluating cue policy for ClusterImagePolicy: failed to evaluate the policy with error: authorityMatches.keysignature.signatures: invalid value',
      );
      expect(reason).toContain('does not satisfy list.MaxItems(1)');
    }
  });

  it('the SBOM examples: an SPDX attestation of examples/sboms/example.spdx.json', async () => {
    const policies = [
      ...(await upstreamPolicies('examples/policies/custom-key-attestation-sbom-spdxjson.yaml')),
      ...(await upstreamPolicies('examples/policies/keyless-attestation-sbom-spdxjson.yaml')),
    ];
    expect(policies).toHaveLength(2);
    const [keyed, keyless] = await Promise.all(policies.map((p) => compiled(p)));
    const image = await push(plain, 'demo/sbom');
    await attest(image, keyA, 'custom', 'not an SBOM');
    expect(reasonOf(await check(image, keyless as CompiledAuthorities))).toContain(
      'no verified attestation of type "spdxjson" (https://spdx.dev/Document)',
    );
    const sbom = { file: join(upstream, 'examples/sboms/example.spdx.json') };
    await attest(image, keyA, 'spdxjson', sbom);
    expect(await check(image, keyless as CompiledAuthorities)).toMatchObject({ passed: true });
    expect(reasonOf(await check(image, keyed as CompiledAuthorities))).toMatch(
      /no valid attestation: 2 found, 0 verified/,
    );
    await attest(image, keyB, 'spdxjson', sbom);
    expect(await check(image, keyed as CompiledAuthorities)).toMatchObject({ passed: true });
  });

  it('the OCI 1.1 script as upstream runs it: enable-oci11, an in-toto referrer, the policy as written', async () => {
    const script = 'test/e2e_test_cluster_image_policy_with_oci11_attestations.sh';
    const text = await readFile(join(upstream, script), 'utf8');
    // kubectl patch configmap/config-policy-controller ... --patch '{"data":{"enable-oci11":"true"}}'
    const [, patch = ''] = text.match(/--patch '(\{"data":\{"enable-oci11":"true"\}\})'/) ?? [];
    const config = parsePolicyControllerConfig((JSON.parse(patch) as { data: unknown }).data);
    expect(config.enableOCI11).toBe(true);
    const inline = await inlinePolicy(script);
    expect(inline.spec.authorities[0]?.signatureFormat).toBeUndefined();
    const policyWith = async (enableOCI11: boolean) => {
      const revision = `${inline.metadata.name}@oci11-${enableOCI11}-${++revisions}`;
      return compileAuthorities(adapted(inline), { engines, enableOCI11, revision: () => revision });
    };
    const [on, off] = [await policyWith(config.enableOCI11), await policyWith(false)];
    const provenance = join(runDir, 'oci11-provenance.json');
    await writeFile(provenance, JSON.stringify({ buildDefinition: { buildType: 'x' }, runDetails: {} }));
    const referrer = async (image: string, key: Testbed.CosignKeyPair) => {
      const envelope = await cosign.attestationEnvelope(image, key, {
        predicatePath: provenance,
        type: 'slsaprovenance1',
        format: 'legacy',
      });
      const [repository = '', digest = ''] = image.slice(oci.host.length + 1).split('@');
      // As Cloud Build attaches provenance: artifactType application/vnd.in-toto+json, the envelope first.
      await testbed.pushReferrer(oci, repository, digest, {
        artifactType: 'application/vnd.in-toto+json',
        layers: [{ mediaType: 'application/vnd.dsse.envelope.v1+json', content: Buffer.from(envelope) }],
      });
    };
    const image = await push(oci, 'cloudrun/container/hello-oci11');
    await referrer(image, keyB);
    expect(await check(image, on)).toMatchObject({ passed: true });
    // Without enable-oci11, neither reads referrers for this authority.
    expect(reasonOf(await check(image, off))).toContain('no attestation found');
    // An envelope by another key: upstream's OCI 1.1 path takes referrer attestations without
    // checking their signature and would admit this; Signet verifies them as any other.
    const forged = await push(oci, 'cloudrun/container/hello-forged');
    await referrer(forged, keyA);
    expect(reasonOf(await check(forged, on))).toMatch(/no valid attestation: 1 found, 0 verified/);
  });

  it("enable-oci11 for signatures: cosign's experimental referrer signature counts, as upstream's check tries it first", async () => {
    const cip = parseClusterImagePolicy({
      apiVersion: 'policy.sigstore.dev/v1beta1',
      kind: 'ClusterImagePolicy',
      metadata: { name: 'oci11-signature' },
      spec: { images: [{ glob: '**' }], authorities: [{ key: { data: publicB } }] },
    });
    const policyWith = async (enableOCI11: boolean) => {
      const revision = `oci11-signature@${enableOCI11}-${++revisions}`;
      return compileAuthorities(cip, { enableOCI11, revision: () => revision });
    };
    for (const registry of [oci, plain]) {
      const image = await push(registry, 'demo/oci11-signature');
      await cosign.signLegacyKeyedOci11(image, keyB);
      expect(await check(image, await policyWith(true))).toMatchObject({ passed: true });
      expect(reasonOf(await check(image, await policyWith(false)))).toContain('no signature found');
    }
  });

  it('the OCI 1.1 script: SLSA provenance v1 in a Sigstore bundle, found as a referrer', async () => {
    // Signet's own route to the same attestation: the authority says signatureFormat: bundle.
    const inline = await inlinePolicy('test/e2e_test_cluster_image_policy_with_oci11_attestations.sh');
    const authorities = inline.spec.authorities.map((a) => ({ ...a, signatureFormat: 'bundle' as const }));
    const policy = await compiled({ ...inline, spec: { ...inline.spec, authorities } });
    const image = await push(oci, 'cloudrun/container/hello');
    await attest(image, keyB, 'custom', 'no provenance', 'bundle');
    expect(reasonOf(await check(image, policy))).toContain(
      'no verified attestation of type "https://slsa.dev/provenance/v1"',
    );
    const provenance = JSON.stringify({
      buildDefinition: {
        buildType: 'https://cloudbuild.googleapis.com/CloudBuildYaml@v1',
        externalParameters: { source: 'git+https://example.test/repo@refs/heads/main' },
      },
      runDetails: { builder: { id: 'https://cloudbuild.googleapis.com/GoogleHostedWorker' } },
    });
    await attest(image, keyB, 'slsaprovenance1', provenance, 'bundle');
    expect(await check(image, policy)).toMatchObject({ passed: true });
  });

  it('a CycloneDX SBOM and a vulnerability scan, in CUE and in Rego (Signet policies in upstream form)', async () => {
    const cip = (name: string, predicateType: string, type: string, data: string) =>
      parseClusterImagePolicy({
        apiVersion: 'policy.sigstore.dev/v1beta1',
        kind: 'ClusterImagePolicy',
        metadata: { name },
        spec: {
          images: [{ glob: '**' }],
          authorities: [
            { key: { data: 'x' }, attestations: [{ name, predicateType, policy: { type, data } }] },
          ],
        },
      });
    const cyclonedxCue = await compiled(
      cip(
        'cdx',
        'cyclonedx',
        'cue',
        'predicate: {\n  bomFormat: "CycloneDX"\n  components: [...{type: "library"}]\n}\n',
      ),
    );
    const vulnRego = await compiled(
      cip(
        'scan',
        'vuln',
        'rego',
        'package sigstore\ndefault isCompliant = false\nisCompliant {\n  input.predicate.scanner.uri == "fakescanner.example.com/cosign-testing"\n  count(input.predicate.scanner.result.Results) == 0\n}\n',
      ),
    );
    const image = await push(plain, 'demo/cyclonedx');
    const bom = (type: string) =>
      JSON.stringify({
        bomFormat: 'CycloneDX',
        specVersion: '1.5',
        components: [{ type, name: 'zlib', version: '1.3' }],
      });
    await attest(image, keyB, 'cyclonedx', bom('application'));
    expect(reasonOf(await check(image, cyclonedxCue))).toContain(
      'failed evaluating cue policy for cdx: failed to evaluate the policy with error: predicate.components.0.type: conflicting values "library" and "application"',
    );
    await attest(image, keyB, 'cyclonedx', bom('library'));
    expect(await check(image, cyclonedxCue)).toMatchObject({ passed: true });
    const scan = (results: unknown[]) =>
      JSON.stringify({
        invocation: { uri: 'invocation.example.com/cosign-testing' },
        scanner: { uri: 'fakescanner.example.com/cosign-testing', result: { Results: results } },
        metadata: { scanStartedOn: '2026-12-01T00:00:00Z', scanFinishedOn: '2026-12-01T00:01:00Z' },
      });
    await attest(image, keyB, 'vuln', scan([{ Target: 'zlib', Vulnerabilities: [{ id: 'CVE-2026-0001' }] }]));
    expect(reasonOf(await check(image, vulnRego))).toContain('failed evaluating rego policy for type scan');
    await attest(image, keyB, 'vuln', scan([]));
    expect(await check(image, vulnRego)).toMatchObject({ passed: true });
  });

  it('stops an attestation policy that loops and a spec-level policy that allocates without bound, as infrastructure failures', async () => {
    const cip = (spec: Record<string, unknown>) =>
      parseClusterImagePolicy({
        apiVersion: 'policy.sigstore.dev/v1beta1',
        kind: 'ClusterImagePolicy',
        metadata: { name: 'runaway' },
        spec: { images: [{ glob: '**' }], ...spec },
      });
    const looping = await compiled(
      cip({
        authorities: [
          {
            key: { data: 'x' },
            attestations: [
              {
                name: 'loop',
                predicateType: 'custom',
                policy: {
                  type: 'rego',
                  data: 'package sigstore\nisCompliant { count([x | x := numbers.range(1, 1000000000)[_]]) > 0 }',
                },
              },
            ],
          },
        ],
      }),
    );
    const image = await push(plain, 'demo/runaway');
    await attest(image, keyB, 'custom', 'foobar e2e test');
    const stopped = await check(image, looping);
    expect(stopped).toMatchObject({
      passed: false,
      failure: { kind: 'infrastructure', code: 'POLICY_ENGINE_FAILED' },
    });
    expect(reasonOf(stopped)).toContain('the rego policy did not finish within 2000 ms and was stopped');
    // A smaller memory bound and a longer deadline, so that memory runs out first.
    const small = createPolicyEngines({
      limits: { memoryLimitBytes: 64 * 1024 * 1024, evaluationTimeoutMs: 120_000 },
    });
    const allocating = await compileAuthorities(
      cip({
        authorities: [{ static: { action: 'pass' } }],
        policy: {
          type: 'cue',
          data: 'import "list"\nauthorityMatches: {...}\nx: [for i in list.Range(0, len(authorityMatches) * 50000000, 1) {a: i}]',
        },
      }),
      { engines: small },
    );
    const runaway = { ...allocating, revision: 'runaway@memory' };
    const exhausted = await check(image, runaway);
    await small.close();
    expect(exhausted).toMatchObject({
      passed: false,
      failure: { kind: 'infrastructure', code: 'POLICY_ENGINE_FAILED' },
    });
    expect(reasonOf(exhausted)).toContain("exhausted the engine's memory and was stopped");
    // The engines serve the next policy.
    const [fine] = await upstreamPolicies(
      'test/testdata/policy-controller/e2e/cip-keyless-with-attestations.yaml',
    );
    const adaptedFine = await compiled(fine as ClusterImagePolicy);
    await attest(image, keyA, 'custom', 'foobar e2e test');
    expect(await check(image, adaptedFine)).toMatchObject({ passed: true });
  });

  /** An index of two images whose configs say `User: 65532`, for linux/amd64 and linux/arm/v7 (as upstream's test image). */
  async function multiPlatformImage(repository: string): Promise<string> {
    const env = testbed.craneEnv(runDir);
    const crane_ = (args: string[]) =>
      testbed.runCommand(crane, [...args, '--insecure'], { env, timeoutMs: 60_000 });
    const base = await push(plain, repository);
    const children: string[] = [];
    for (const platform of ['linux/amd64', 'linux/arm/v7']) {
      const tag = `${plain.host}/${repository}:${platform.replaceAll('/', '-')}`;
      await crane_(['mutate', base, '--set-platform', platform, '--user', '65532', '-t', tag]);
      children.push(tag);
    }
    const index = `${plain.host}/${repository}:index`;
    await crane_(['index', 'append', ...children.flatMap((c) => ['-m', c]), '-t', index]);
    const digest = (await crane_(['digest', index])).stdout.trim();
    return `${plain.host}/${repository}@${digest}`;
  }

  it('fetchConfigFile: the config files of every platform, as upstream reads them', async () => {
    const dir = 'test/testdata/policy-controller/e2e';
    const [expected] = await expectedErrors('test/e2e_test_cluster_image_policy_with_fetch_config_file.sh');
    const [fromConfigMap] = await expectedErrors(
      'test/e2e_test_cluster_image_policy_from_configmap_with_fetch_config_file.sh',
    );
    expect(expected).toBe(fromConfigMap);
    const image = await multiPlatformImage('demo/config-file');
    const [passing] = await upstreamPolicies(`${dir}/cip-config-file-policy.yaml`);
    expect(await check(image, await compiled(passing as ClusterImagePolicy))).toMatchObject({ passed: true });
    const [failing] = await upstreamPolicies(`${dir}/cip-config-file-policy-fails.yaml`);
    expect(reasonOf(await check(image, await compiled(failing as ClusterImagePolicy)))).toContain(expected);
    // The ConfigMap upstream's script makes: --from-file=policy=./test/testdata/policies/cue-policy-config.cue
    const [viaConfigMap] = await upstreamPolicies(`${dir}/cip-config-file-policy-from-configmap.yaml`);
    const policyFile = await readFile(join(upstream, 'test/testdata/policies/cue-policy-config.cue'), 'utf8');
    const withConfigMap = await compileAuthorities(adapted(viaConfigMap as ClusterImagePolicy), {
      engines,
      lookupConfigMap: (namespace, name) =>
        namespace === 'cosign-system' && name === 'policy-config' ? { policy: policyFile } : undefined,
      revision: () => 'cm@1',
    });
    expect(reasonOf(await check(image, withConfigMap))).toContain(expected);
    // As upstream: a config the policy does not name is not checked (the policy's own values
    // stand), so an image without these platforms passes the passing policy too.
    const single = await push(plain, 'demo/config-single');
    expect(await check(single, await compiled(passing as ClusterImagePolicy))).toMatchObject({
      passed: true,
    });
  });

  it('cip-policy-from-url: a remote policy, fetched over HTTPS when compiled, digest-checked', async () => {
    // Upstream's file names a gist; the same kind of policy (upstream's cue-policy-config.cue) is
    // served here on loopback, and the URL and sha256sum are pointed at it.
    const [expected] = await expectedErrors('test/e2e_test_cluster_image_policy_from_url.sh');
    const content = await readFile(join(upstream, 'test/testdata/policies/cue-policy-config.cue'));
    const certificate = await testbed.mintServerCertificate(runDir, 'policy', ['127.0.0.1']);
    const cert = certificate.pem;
    const server = createHttpsServer({ key: certificate.keyPem, cert }, (_, response) =>
      response.end(content),
    );
    const port = await listenInRange(server);
    try {
      const url = `https://127.0.0.1:${port}/policy-controller-test-fail-cue`;
      const [policy] = await upstreamPolicies('test/testdata/policy-controller/e2e/cip-policy-from-url.yaml');
      const cip = policy as ClusterImagePolicy;
      const sha256sum = createHash('sha256').update(content).digest('hex');
      const remote = {
        ...cip,
        spec: { ...cip.spec, policy: { ...cip.spec.policy, type: 'cue', remote: { url, sha256sum } } },
      };
      const compiledRemote = await compileAuthorities(adapted(remote), {
        engines,
        fetchRemotePolicy: remotePolicyFetcher({ ca: cert, privateHosts: [`127.0.0.1:${port}`] }),
      });
      const image = await multiPlatformImage('demo/from-url');
      const result = await check(image, { ...compiledRemote, revision: 'url@1' });
      expect(reasonOf(result)).toContain(expected);
      const tampered = {
        ...remote,
        spec: {
          ...remote.spec,
          policy: { ...remote.spec.policy, remote: { url, sha256sum: 'f'.repeat(64) } },
        },
      };
      await expect(
        compileAuthorities(adapted(tampered), {
          engines,
          fetchRemotePolicy: remotePolicyFetcher({ ca: cert, privateHosts: [`127.0.0.1:${port}`] }),
        }),
      ).rejects.toMatchObject({
        code: 'REMOTE_POLICY_FAILED',
        message: expect.stringContaining('not the sha256sum'),
      });
    } finally {
      server.close();
    }
  });

  describe('spec.policy with includeSpec, includeObjectMeta and includeTypeMeta', () => {
    // What the admission service hands the verifier for a Pod CREATE: the object's parts, as the
    // API server sent them (the ServiceAccount admission plugin has set serviceAccount).
    const pod = (labels: Record<string, string>, kind = 'Pod') => ({
      spec: {
        containers: [{ name: 'demo', image: 'x' }],
        serviceAccountName: 'default',
        serviceAccount: 'default',
      },
      metadata: { name: 'demo', namespace: 'demo-include', labels },
      typemeta: { apiVersion: kind === 'Pod' ? 'v1' : 'batch/v1', kind },
    });
    const cases = [
      { name: 'include-spec', script: 'with_include_spec', fails: pod({}), passes: pod({}) },
      {
        name: 'include-objectmeta',
        script: 'with_include_objectmeta',
        fails: pod({ foo: 'bar' }),
        passes: pod({ foo: 'bar' }),
      },
      { name: 'include-typemeta', script: 'with_include_typemeta', fails: pod({}, 'Job'), passes: pod({}) },
    ];
    for (const { name, script, fails, passes } of cases) {
      it(`${name}: upstream's failing policy fails with upstream's message, the passing one passes`, async () => {
        const [expected] = await expectedErrors(`test/e2e_test_cluster_image_policy_${script}.sh`);
        const dir = 'test/testdata/policy-controller/e2e';
        const failing =
          name === 'include-typemeta' ? `${dir}/cip-${name}.yaml` : `${dir}/cip-${name}-fails.yaml`;
        const [bad] = await upstreamPolicies(failing);
        const [good] = await upstreamPolicies(`${dir}/cip-${name}.yaml`);
        const image = await push(plain, `demo/${name}`);
        expect(reasonOf(await check(image, await compiled(bad as ClusterImagePolicy), fails))).toContain(
          expected,
        );
        expect(await check(image, await compiled(good as ClusterImagePolicy), passes)).toMatchObject({
          passed: true,
        });
      });
    }

    it('allow-only-pods (examples): a Pod passes, a Deployment does not', async () => {
      const [policy] = await upstreamPolicies('examples/policies/allow-only-pods.yaml');
      const allowOnlyPods = await compiled(policy as ClusterImagePolicy);
      const image = await push(plain, 'demo/only-pods');
      expect(await check(image, allowOnlyPods, pod({}))).toMatchObject({ passed: true });
      expect(reasonOf(await check(image, allowOnlyPods, pod({}, 'Deployment')))).toContain(
        'typemeta.kind: conflicting values "Deployment" and "Pod"',
      );
    });
  });
});
