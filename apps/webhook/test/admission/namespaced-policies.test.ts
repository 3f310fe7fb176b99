// Namespaced ImagePolicies and ImagePolicyExceptions end to end without a cluster: `signet serve
// --policy-file` over real HTTPS, `signet verify` and `signet audit -f`, against a real registry
// with images pushed by crane and signatures made by the real cosign CLI. The cluster has one
// ClusterImagePolicy (the release key); team-a adds its own key, read from a Secret of team-a.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type * as Testbed from '@signet/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { ExceptionUse } from '../../src/admission/admission-service.js';
import { oneShotAdmission } from '../../src/admission/assemble-admission.js';
import { judgeCreate } from '../../src/admission/judge-create.js';
import {
  createCertificateAuthority,
  type IssuedCertificate,
  issueServingCertificate,
} from '../../src/certificates.js';
import { main } from '../../src/cli/main.js';
import { serveConfigFrom } from '../../src/commands/serve-config.js';
import { createLogger } from '../../src/logger.js';
import { SignetMetrics } from '../../src/metrics.js';
import { WebhookPolicyEngines } from '../../src/policy/policy-engines.js';
import { readPolicyFiles } from '../../src/policy/policy-file.js';
import { type RunningSignet, startSignet } from '../../src/signet.js';
import { LogCapture, post } from '../helpers.js';
import { podSpec } from '../reviews.js';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

let group: Testbed.ProcessGroup | undefined;
let runDir = '';
let host = '';
let ca: IssuedCertificate;
let signet: RunningSignet;
let metrics: SignetMetrics;
let policyFile = '';
const logs = new LogCapture();
/** Signed by the release key and team-a's key. */
let both = '';
/** Signed by the release key only. */
let releaseOnly = '';
/** Signed by the release key only; team-a has an exception for it. */
let hotfix = '';
/** Signed by nobody, in the hotfix repository the exception names. */
let hotfixUnsigned = '';
/** Signed by team-a's key only, in a repository no ClusterImagePolicy matches. */
let teamTool = '';
const HOUR = 3_600_000;

beforeAll(async () => {
  const testbed = await import('@signet/testbed');
  const { crane } = await testbed.ensureTools(['crane', 'cosign', 'registry'], {
    onProgress: (event) => console.log(`testbed: ${event.message}`),
  });
  runDir = await testbed.createRunDir('signet-namespaced-');
  group = new testbed.ProcessGroup({ runDir, graceMs: 2000 });
  const registry = await testbed.startRegistry({ referrers: false, group });
  host = registry.host;
  const cosign = await testbed.createCosign({ workDir: runDir });
  const releaseKey = await cosign.generateKeyPair(join(runDir, 'release'), 'pw');
  const teamKey = await cosign.generateKeyPair(join(runDir, 'team-a'), 'pw');
  const push = async (repo: string, tag: string) =>
    `${host}/${repo}@${await testbed.pushRandomImage(registry, repo, tag, { crane, workDir: runDir })}`;
  both = await push('team-a/app', 'v2');
  releaseOnly = await push('team-a/app', 'v1');
  hotfix = await push('team-a/hotfix', 'v1');
  hotfixUnsigned = await push('team-a/hotfix', 'v2');
  teamTool = await push('tools/team-a-tool', 'v1');
  for (const image of [both, releaseOnly, hotfix]) await cosign.signLegacyKeyed(image, releaseKey);
  for (const image of [both, teamTool]) await cosign.signLegacyKeyed(image, teamKey);

  const indent = (pem: string) => pem.trim().split('\n').join('\n          ');
  const releasePem = indent(await readFile(releaseKey.publicKey, 'utf8'));
  const teamPem = await readFile(teamKey.publicKey, 'utf8');
  const now = Date.now();
  policyFile = join(runDir, 'policies.yaml');
  await writeFile(
    policyFile,
    `apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: release }
spec:
  images: [{ glob: "${host}/team-a/**" }, { glob: "${host}/team-b/**" }]
  authorities:
    - name: release-key
      key:
        data: |
          ${releasePem}
---
apiVersion: v1
kind: ConfigMap
metadata: { name: config-policy-controller, namespace: signet-system }
data: { no-match-policy: allow }
---
# team-a's own key, in a Secret of team-a: its ImagePolicy reads it there.
apiVersion: v1
kind: Secret
metadata: { name: ci-key, namespace: team-a }
stringData: { cosign.pub: ${JSON.stringify(teamPem)} }
---
apiVersion: policy.signet.dev/v1alpha1
kind: ImagePolicy
metadata: { name: ci, namespace: team-a }
spec:
  images: [{ glob: "${host}/**" }]
  authorities:
    - name: team-a-ci
      key: { secretRef: { name: ci-key } }
---
apiVersion: policy.signet.dev/v1alpha1
kind: ImagePolicyException
metadata: { name: hotfix, namespace: team-a }
spec:
  images: [{ glob: "${host}/team-a/hotfix*" }]
  policies: [{ kind: ImagePolicy, name: ci }]
  reason: "INC-1: built by hand during the outage"
  expires: "${new Date(now + 24 * HOUR).toISOString()}"
---
apiVersion: policy.signet.dev/v1alpha1
kind: ImagePolicyException
metadata: { name: yesterday, namespace: team-a }
spec:
  images: [{ digest: "${releaseOnly.split('@')[1]}" }]
  policies: [{ kind: ImagePolicy, name: ci }]
  reason: "INC-0: over"
  expires: "${new Date(now - HOUR).toISOString()}"
---
# Another project's kind of the same name is not Signet's.
apiVersion: image.toolkit.fluxcd.io/v1beta2
kind: ImagePolicy
metadata: { name: flux, namespace: team-a }
spec: { imageRepositoryRef: { name: app } }
`,
  );
  ca = await createCertificateAuthority('signet-test', 1);
  const serving = await issueServingCertificate(ca, ['127.0.0.1'], 1);
  await writeFile(join(runDir, 'tls.crt'), serving.cert);
  await writeFile(join(runDir, 'tls.key'), serving.key);
  metrics = new SignetMetrics({ defaultMetrics: false });
  signet = await startSignet(
    serveConfigFrom(
      {
        port: '0',
        'ops-port': '0',
        host: '127.0.0.1',
        namespace: 'signet-system',
        'policy-file': [policyFile],
        'tls-cert-file': join(runDir, 'tls.crt'),
        'tls-key-file': join(runDir, 'tls.key'),
        'insecure-registry': [host],
      },
      {},
    ),
    { logger: createLogger({ destination: logs }), metrics },
  );
}, 30 * 60_000);

afterAll(async () => {
  await signet?.stop(1000);
  await group?.stopAll();
  if (runDir) await rm(runDir, { recursive: true, force: true });
});

interface Answer {
  allowed: boolean;
  status?: { code: number; message: string };
  warnings?: string[];
}

let counter = 0;

function podReview(namespace: string, image: string, operation = 'CREATE', old: unknown = null): string {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace }, spec: podSpec(image) };
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `ns-review-${++counter}`,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      name: 'p',
      namespace,
      operation,
      userInfo: { username: 'alice' },
      object: pod,
      oldObject: old,
      dryRun: false,
    },
  });
}

async function admit(body: string): Promise<Answer> {
  const answer = await post(`https://127.0.0.1:${signet.servers.port}/validate?timeout=10s`, body, ca.cert);
  expect(answer.status).toBe(200);
  return answer.json().response as Answer;
}

async function exceptionUses(): Promise<string> {
  return (await metrics.registry.getSingleMetricAsString('signet_exception_uses_total'))
    .split('\n')
    .filter((line) => !line.startsWith('#'))
    .join('\n');
}

describe('signet serve --policy-file enforces ImagePolicies and exceptions', () => {
  it('loads the namespace policies beside the cluster ones', () => {
    const set = signet.store.current?.policySet;
    expect(set?.policies.map((p) => p.name)).toEqual(['release']);
    expect([...(set?.namespaced.keys() ?? [])]).toEqual(['team-a']);
    expect(set?.namespaced.get('team-a')?.map((p) => [p.name, p.broken])).toEqual([['team-a/ci', undefined]]);
    expect([...(set?.exceptions.get('team-a') ?? [])].map((e) => e.name)).toEqual([
      'team-a/hotfix',
      'team-a/yesterday',
    ]);
  });

  it("admits in team-a what both the cluster's key and team-a's key signed", async () => {
    expect(await admit(podReview('team-a', both))).toMatchObject({ allowed: true });
  });

  it("denies in team-a what only the cluster's key signed, naming team-a's policy; another namespace admits it", async () => {
    const denied = await admit(podReview('team-a', releaseOnly));
    expect(denied.allowed).toBe(false);
    expect(denied.status?.message).toBe(
      `spec.containers[0].image ${releaseOnly}: policy "team-a/ci" (enforce): no valid signature: 1 found, 0 verified (signature does not match key "ci-key/cosign.pub")`,
    );
    expect(await admit(podReview('team-b', releaseOnly))).toMatchObject({ allowed: true });
  });

  it('the expired exception for that image admits nothing', async () => {
    // `yesterday` names exactly this digest and this policy, and expired an hour ago.
    const denied = await admit(podReview('team-a', releaseOnly));
    expect(denied.allowed).toBe(false);
    expect(denied.warnings).toBeUndefined();
  });

  it('admits the hotfix under its exception, with a warning naming it, counted and logged', async () => {
    const before = await exceptionUses();
    expect(before).not.toContain('exception="hotfix"');
    const answer = await admit(podReview('team-a', hotfix));
    expect(answer.allowed).toBe(true);
    expect(answer.warnings).toHaveLength(1);
    expect(answer.warnings?.[0]).toMatch(
      new RegExp(
        `^spec\\.containers\\[0\\]\\.image ${hotfix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: policy "team-a/ci" not applied: exempted by ImagePolicyException team-a/hotfix until \\S+ \\(INC-1: built by hand during the outage\\)$`,
      ),
    );
    expect(await exceptionUses()).toContain(
      'signet_exception_uses_total{namespace="team-a",exception="hotfix"} 1',
    );
    const logged = logs.lines.find(
      (l) => l.msg === 'policy not applied: exempted by an ImagePolicyException',
    );
    expect(logged).toMatchObject({
      namespace: 'team-a',
      image: hotfix,
      policy: 'team-a/ci',
      exception: 'team-a/hotfix',
      reason: 'INC-1: built by hand during the outage',
      decision: 'warned',
    });
  });

  it("the exception removes only team-a's policy: the cluster's still denies an unsigned hotfix", async () => {
    const denied = await admit(podReview('team-a', hotfixUnsigned));
    expect(denied.allowed).toBe(false);
    expect(denied.status?.message).toBe(
      `spec.containers[0].image ${hotfixUnsigned}: policy "release" (enforce): no signature found`,
    );
    expect(denied.warnings?.[0]).toContain(
      'policy "team-a/ci" not applied: exempted by ImagePolicyException team-a/hotfix',
    );
  });

  it("an image only team-a's policy matches is checked by it beside no-match-policy allow", async () => {
    expect(await admit(podReview('team-a', teamTool))).toMatchObject({ allowed: true });
    expect(await admit(podReview('team-b', teamTool))).toMatchObject({ allowed: true });
    const unsigned = `${host}/tools/team-a-tool@${releaseOnly.split('@')[1]}`;
    expect(await admit(podReview('team-a', unsigned))).toMatchObject({ allowed: false });
  });

  it("a write that starts no container is admitted without consulting team-a's policy (rule 8)", async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'team-a' },
      spec: podSpec(releaseOnly),
    };
    const relabelled = { ...pod, metadata: { ...pod.metadata, labels: { audited: 'yes' } } };
    const body = JSON.parse(podReview('team-a', releaseOnly, 'UPDATE', pod));
    body.request.object = relabelled;
    expect(await admit(JSON.stringify(body))).toMatchObject({ allowed: true });
  });
});

async function cli(...args: string[]) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main([...args, '--insecure-registry', host], { stdout, stderr });
  return { code, out: stdout.text, err: stderr.text };
}

describe('signet verify and signet audit -f read the namespace policies from policy files', () => {
  it('verify judges an image in the namespace it is given', async () => {
    const inTeamA = await cli('verify', releaseOnly, '--policy-file', policyFile, '--namespace', 'team-a');
    expect(inTeamA.code).toBe(1);
    expect(inTeamA.out).toContain('FAIL policy "team-a/ci" (enforce)');
    expect(inTeamA.out).toContain('warning: ImagePolicyException/team-a/yesterday: expired at');
    const inTeamB = await cli('verify', releaseOnly, '--policy-file', policyFile, '--namespace', 'team-b');
    expect(inTeamB.code).toBe(0);
    const exempted = await cli('verify', hotfix, '--policy-file', policyFile, '--namespace', 'team-a');
    expect(exempted.code).toBe(0);
    expect(exempted.out).toContain('PASS policy "release" (enforce)');
    expect(exempted.out).toContain('exempted by ImagePolicyException team-a/hotfix');
    // A maximum lifetime shorter than the exception's makes it apply to nothing.
    const short = await cli(
      'verify',
      hotfix,
      '--policy-file',
      policyFile,
      '--namespace',
      'team-a',
      '--exception-max-lifetime',
      '1h',
    );
    expect(short.code).toBe(1);
    expect(short.out).toContain('later than --exception-max-lifetime allows');
  });

  it('audit -f reports exemptions as warnings and team policies as findings', async () => {
    const manifests = join(runDir, 'workloads.yaml');
    const pod = (name: string, image: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'team-a' },
      spec: podSpec(image),
    });
    await writeFile(
      manifests,
      [pod('good', both), pod('legacy', releaseOnly), pod('hotfix', hotfix)]
        .map((o) => stringify(o))
        .join('---\n'),
    );
    const { code, out } = await cli(
      'audit',
      '-f',
      manifests,
      '--policy-file',
      policyFile,
      '-o',
      'json',
      '-q',
    );
    expect(code).toBe(1);
    const report = JSON.parse(out) as { objects: { name: string; result: string; findings: object[] }[] };
    const byName = new Map(report.objects.map((o) => [o.name, o]));
    expect(byName.get('good')).toMatchObject({
      result: 'pass',
      findings: [
        { policy: 'release', result: 'pass' },
        { policy: 'team-a/ci', result: 'pass' },
      ],
    });
    expect(byName.get('legacy')).toMatchObject({
      result: 'fail',
      findings: [
        { policy: 'release', result: 'pass' },
        { policy: 'team-a/ci', result: 'fail' },
      ],
    });
    expect(byName.get('hotfix')).toMatchObject({
      result: 'warn',
      findings: [
        { policy: 'release', result: 'pass' },
        {
          policy: 'team-a/ci',
          result: 'warn',
          reason: expect.stringContaining('exempted by ImagePolicyException team-a/hotfix until'),
        },
      ],
    });
  });
});

describe('exception uses are real writes', () => {
  it('a dry run (kubectl --dry-run=server, the background audit) is admitted the same but not counted or told; a denied write is counted, not told', async () => {
    const told: { request: AdmissionRequestLike; uses: readonly ExceptionUse[] }[] = [];
    const own = new SignetMetrics({ defaultMetrics: false });
    const engines = new WebhookPolicyEngines(createLogger({ level: 'silent' }));
    try {
      const admission = await oneShotAdmission(await readPolicyFiles([policyFile], 'signet-system'), {
        logger: createLogger({ level: 'silent' }),
        metrics: own,
        namespace: 'signet-system',
        engines,
        onProblem: () => {},
        insecureRegistries: [host],
        registries: {
          insecureRegistries: [host],
          privateHosts: [],
          caCertificates: [],
          cloudCredentials: [],
          kmsEndpoints: [],
        },
        resolveDigests: true,
        onExceptionUses: (request, uses) => told.push({ request, uses }),
      });
      const uses = async () =>
        (await own.registry.getSingleMetricAsString('signet_exception_uses_total'))
          .split('\n')
          .filter((line) => line.startsWith('signet_exception_uses_total{'));
      const review = (image: string, dryRun: boolean) => {
        const request = JSON.parse(podReview('team-a', image)).request;
        return admission.service.review(
          'validate',
          { ...request, dryRun },
          {
            signal: new AbortController().signal,
            deadline: Date.now() + 20_000,
            budgetMs: 20_000,
          },
        );
      };
      const dry = await review(hotfix, true);
      expect(dry.decision).toBe('warned');
      expect(dry.response.warnings?.[0]).toContain('exempted by ImagePolicyException team-a/hotfix');
      // The audit's path (judgeCreate: dry-run CREATEs) too.
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'audited', namespace: 'team-a' },
        spec: podSpec(hotfix),
      };
      const request = { ...JSON.parse(podReview('team-a', hotfix)).request, object: pod, dryRun: true };
      const audited = await judgeCreate(admission.service, request, 20_000);
      expect(audited.validated.decision).toBe('warned');
      expect(await uses()).toEqual([]);
      expect(told).toEqual([]);

      const real = await review(hotfix, false);
      expect(real.decision).toBe('warned');
      expect(await uses()).toEqual(['signet_exception_uses_total{namespace="team-a",exception="hotfix"} 1']);
      expect(told).toHaveLength(1);
      expect(told[0]?.request.namespace).toBe('team-a');
      expect(told[0]?.uses).toEqual([
        {
          image: hotfix,
          path: 'spec.containers[0].image',
          exemption: expect.objectContaining({
            policy: 'team-a/ci',
            exception: 'team-a/hotfix',
            reason: 'INC-1: built by hand during the outage',
          }),
        },
      ]);
      // Denied by the cluster's policy: the exception was used (counted) but nothing was admitted.
      const denied = await review(hotfixUnsigned, false);
      expect(denied.decision).toBe('denied');
      expect(await uses()).toEqual(['signet_exception_uses_total{namespace="team-a",exception="hotfix"} 2']);
      expect(told).toHaveLength(1);
    } finally {
      await engines.close();
    }
  });
});

type AdmissionRequestLike = { readonly namespace?: string };
