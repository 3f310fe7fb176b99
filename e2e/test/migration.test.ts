// docs/migrating-from-policy-controller.md, run as written on a real API server: every command
// block after a `<!-- step: NAME -->` marker, in order, through bash, with the real helm, kubectl
// and the built `signet` CLI on PATH. policy-controller is installed as its chart installs it: a
// Helm release of its Go module's own config/ manifests (its CRDs as templates behind
// `installCRDs`, as the sigstore/helm-charts chart has them; its webhook configurations, Service and
// Deployment), with its own example policies and a TrustRoot, carrying the finalizers its
// reconcilers add. policy-controller's binary is not built or run (about 10 minutes to build here):
// its Pods are kwok's, so its webhooks never answer, as after its Pods are gone. After each step
// every policy and TrustRoot is checked to be there, unchanged.
import { generateKeyPairSync } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureTools, httpStatus, policyControllerModule, runCommand } from '@signet/testbed';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type LocalCluster, startLocalCluster } from '../src/cluster/index.ts';
import { manifestText } from '../src/cluster/kubectl.ts';
import { must, poll, signetChartDir } from '../src/scenarios/kube.ts';
import { SIGNET_NAMESPACE, type SignetWebhook, signetCliPath, startSignet } from '../src/signet-webhook.ts';

const log = (line: string) => process.stderr.write(`${line}\n`);
const GUIDE = new URL('../../docs/migrating-from-policy-controller.md', import.meta.url);
const PC_NAMESPACE = 'cosign-system';
const PC_VERSION = '0.10.5';

/** policy-controller's own objects, from its module: path in the module, and what they are. */
const UPSTREAM_OBJECTS = [
  'test/testdata/policy-controller/e2e/cip-key-secret.yaml',
  'test/testdata/policy-controller/e2e/cip-key-with-attestations-rego.yaml',
  'examples/policies/signed-by-github-actions.yaml',
  'examples/policies/allow-only-pods.yaml',
  'test/testdata/trustroot/valid/valid-sigstore-keys.yaml',
];

interface Stored {
  readonly kind: string;
  readonly metadata: { name: string; finalizers?: string[]; annotations?: Record<string, string> };
  readonly spec: unknown;
}

let cluster: LocalCluster | undefined;
let failed = false;
let upstream = '';
let bin = '';
let pcChart = '';
let signet: SignetWebhook | undefined;
let before = new Map<string, unknown>();
const running = (): LocalCluster => {
  if (!cluster) throw new Error('the cluster did not start');
  return cluster;
};

/** Every step of the guide: its name and its commands. */
async function guideSteps(): Promise<{ name: string; script: string }[]> {
  const text = await readFile(GUIDE, 'utf8');
  return [...text.matchAll(/<!-- step: ([a-z-]+) -->\n```sh\n([\s\S]*?)```/g)].map((m) => ({
    name: m[1] ?? '',
    script: m[2] ?? '',
  }));
}

function env(): NodeJS.ProcessEnv {
  const c = running();
  return {
    PATH: `${bin}:/usr/bin:/bin`,
    HOME: c.runDir,
    KUBECONFIG: c.kubeconfig,
    PC_RELEASE: 'policy-controller',
    PC_NAMESPACE,
    PC_CHART: pcChart,
    PC_VERSION,
    SIGNET_RELEASE: 'signet',
    SIGNET_NAMESPACE,
    SIGNET_CHART: signetChartDir(),
    POLICY_SECRETS: 'cip-secret',
  };
}

async function runStep(name: string): Promise<string> {
  const step = (await guideSteps()).find((s) => s.name === name);
  if (!step) throw new Error(`the guide has no step ${name}`);
  const result = await runCommand('bash', ['--norc', '--noprofile', '-euo', 'pipefail', '-c', step.script], {
    env: env(),
    cwd: running().runDir,
    timeoutMs: 240_000,
  });
  log(`--- step ${name}\n${result.stdout.trim()}\n${result.stderr.trim()}`);
  return result.stdout;
}

/** Every policy and TrustRoot by kind/name with its spec, read at the storage version v1alpha1. */
async function storedObjects(): Promise<Map<string, Stored>> {
  const list = await running().getJson<{ items: Stored[] }>([
    'clusterimagepolicies.v1alpha1.policy.sigstore.dev,trustroots.v1alpha1.policy.sigstore.dev',
  ]);
  return new Map(list.items.map((o) => [`${o.kind}/${o.metadata.name}`, o]));
}

async function expectPoliciesUnchanged(): Promise<void> {
  const now = await storedObjects();
  expect([...now.keys()].sort()).toEqual([...before.keys()].sort());
  for (const [key, object] of now) expect(object.spec, key).toEqual(before.get(key));
}

/** policy-controller's config/ as its Helm chart installs it. */
async function policyControllerChart(dir: string): Promise<string> {
  const chart = join(dir, 'policy-controller-chart');
  await mkdir(join(chart, 'templates'), { recursive: true });
  await writeFile(
    join(chart, 'Chart.yaml'),
    `apiVersion: v2\nname: policy-controller\nversion: ${PC_VERSION}\nappVersion: "0.15.1"\n`,
  );
  await writeFile(join(chart, 'values.yaml'), 'installCRDs: true\n');
  const config = join(upstream, 'config');
  for (const file of (await readdir(config)).filter((f) => f.endsWith('.yaml'))) {
    // The namespace is the release's (--create-namespace); kustomize's file lists the others.
    if (file === 'kustomization.yaml' || file === '100-namespace.yaml') continue;
    const text = await readFile(join(config, file), 'utf8');
    const crd = /^kind: CustomResourceDefinition$/m.test(text);
    await writeFile(
      join(chart, 'templates', file),
      crd ? `{{- if .Values.installCRDs }}\n${text}\n{{- end }}\n` : text,
    );
  }
  return chart;
}

beforeAll(async () => {
  cluster = await startLocalCluster({ onProgress: (event) => log(`cluster ${event.line}`) });
  upstream = await policyControllerModule();
  const tools = await ensureTools(['helm', 'kubectl']);
  bin = join(cluster.runDir, 'bin');
  await mkdir(bin);
  await symlink(tools.helm, join(bin, 'helm'));
  await symlink(tools.kubectl, join(bin, 'kubectl'));
  await writeFile(join(bin, 'signet'), `#!/bin/sh\nexec "${process.execPath}" "${signetCliPath()}" "$@"\n`);
  await chmod(join(bin, 'signet'), 0o755);
  pcChart = await policyControllerChart(cluster.runDir);
  const install = await runCommand(
    tools.helm,
    ['install', 'policy-controller', pcChart, '--namespace', PC_NAMESPACE, '--create-namespace'],
    { env: env(), timeoutMs: 120_000 },
  );
  log(install.stdout.trim());
  must(
    await cluster.kubectl(
      [
        'wait',
        '--for=condition=Established',
        '--timeout=60s',
        'crd/clusterimagepolicies.policy.sigstore.dev',
        'crd/trustroots.policy.sigstore.dev',
      ],
      { timeoutMs: 70_000 },
    ),
  );
  const publicKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .publicKey.export({ format: 'pem', type: 'spki' })
    .toString();
  await cluster.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'cip-secret', namespace: PC_NAMESPACE },
    stringData: { 'cosign.pub': publicKey },
  });
  for (const path of UPSTREAM_OBJECTS) {
    for (const doc of parseAllDocuments(await readFile(join(upstream, path), 'utf8'))) {
      const object = doc.toJS() as Stored | null;
      if (object === null) continue;
      await cluster.apply(object);
      // As policy-controller's reconcilers do on every object they see.
      const finalizer =
        object.kind === 'TrustRoot'
          ? 'trustroots.policy.sigstore.dev'
          : 'clusterimagepolicies.policy.sigstore.dev';
      must(
        await cluster.kubectl([
          'patch',
          `${object.kind === 'TrustRoot' ? 'trustroots' : 'clusterimagepolicies'}.v1alpha1.policy.sigstore.dev`,
          object.metadata.name,
          '--type=merge',
          '-p',
          JSON.stringify({ metadata: { finalizers: [finalizer] } }),
        ]),
      );
    }
  }
  before = new Map([...(await storedObjects())].map(([key, object]) => [key, object.spec]));
  expect(before.size).toBe(UPSTREAM_OBJECTS.length);
}, 600_000);

beforeEach(() => {
  onTestFailed(() => {
    failed = true;
  });
});

afterAll(async () => {
  await signet?.stop();
  if (failed && cluster) log(await cluster.logTails(30));
  await cluster?.stop(failed ? { keepRunDir: true } : {});
});

describe('the migration guide, step by step', () => {
  it('has the steps this test runs, in this order', async () => {
    expect((await guideSteps()).map((s) => s.name)).toEqual([
      'check',
      'secrets',
      'install-signet',
      'wait-for-signet',
      'conversion',
      'keep-crds',
      'uninstall-policy-controller',
      'finalizers',
      'adopt-crds',
      'verify',
    ]);
  });

  it('before: the traps are real, and signet migrate check finds them', async () => {
    // The conversion webhook: v1beta1 (what kubectl and Signet read) cannot be served.
    const read = await running().kubectl(['get', 'clusterimagepolicies']);
    expect(read.exitCode).not.toBe(0);
    expect(read.stderr).toContain(
      'conversion webhook for policy.sigstore.dev/v1alpha1, Kind=ClusterImagePolicy failed',
    );
    const check = await runCommand(
      'bash',
      ['--norc', '--noprofile', '-c', 'signet migrate check --output json; echo "exit $?"'],
      {
        env: env(),
        timeoutMs: 120_000,
      },
    );
    const findings = JSON.parse(check.stdout.slice(0, check.stdout.lastIndexOf('exit'))).findings as {
      severity: string;
      subject: string;
      message: string;
    }[];
    expect(check.stdout.trim().endsWith('exit 1')).toBe(true);
    const blockers = findings.filter((f) => f.severity === 'blocker').map((f) => f.subject);
    expect(blockers).toEqual(
      expect.arrayContaining([
        'crd/clusterimagepolicies.policy.sigstore.dev',
        'crd/trustroots.policy.sigstore.dev',
        'secret/signet-system/cip-secret',
      ]),
    );
    expect(
      findings.find((f) => f.message.includes('`helm uninstall policy-controller` deletes it')),
    ).toBeDefined();
    expect(findings.filter((f) => f.message.includes("policy-controller's finalizer")).length).toBe(
      UPSTREAM_OBJECTS.length,
    );
    expect(findings.map((f) => f.subject)).toContain('validatingwebhookconfiguration/policy.sigstore.dev');
    const compiled = findings.find(
      (f) =>
        f.subject === 'clusterimagepolicy/image-is-signed-by-github-actions' &&
        f.message.startsWith('Signet'),
    );
    expect(compiled?.severity).toBe('ok');
  });

  it('1-2. check, back up, copy the Secrets', async () => {
    await runStep('check');
    expect(await readFile(join(running().runDir, 'policy-backup.yaml'), 'utf8')).toContain('cip-key-secret');
    await runStep('secrets');
    must(await running().kubectl(['get', 'secret', 'cip-secret', '-n', SIGNET_NAMESPACE]));
    await expectPoliciesUnchanged();
  });

  it('3. Signet installs beside policy-controller (without the CRDs) and cannot read the policies yet', async () => {
    await runStep('install-signet');
    await runStep('wait-for-signet');
    // Signet itself runs as a host process (kwok plays the chart's Pods), registered by URL.
    signet = await startSignet({ cluster: running(), insecureRegistries: [], waitFor: 'listening' });
    // Replaced, not applied: a merge would keep the chart's `service` beside the `url`.
    must(
      await running().kubectl(['replace', '-f', '-'], {
        input: manifestText(signet.configurations()),
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(await httpStatus(`${signet.opsUrl}/readyz`, 2000)).toBe(503);
    await expectPoliciesUnchanged();
  });

  it('4. with the conversion webhook off, Signet and kubectl read every policy', async () => {
    await runStep('conversion');
    const current = signet;
    if (!current) throw new Error('Signet is not running');
    await poll('Signet to be ready', 60_000, async () =>
      (await httpStatus(`${current.opsUrl}/readyz`, 2000)) === 200 ? true : 'not ready',
    );
    await current.waitForPolicies([
      'cip-key-secret',
      'image-is-signed-by-github-actions',
      'image-policy-key-with-attestations-rego',
    ]);
    must(await running().kubectl(['get', 'clusterimagepolicies']));
    await expectPoliciesUnchanged();
  });

  it("5-6. the CRDs leave policy-controller's release, which uninstalls without them", async () => {
    await runStep('keep-crds');
    await runStep('uninstall-policy-controller');
    const c = running();
    for (const crd of ['clusterimagepolicies.policy.sigstore.dev', 'trustroots.policy.sigstore.dev'])
      must(await c.kubectl(['get', 'crd', crd]));
    for (const [kind, name] of [
      ['validatingwebhookconfiguration', 'policy.sigstore.dev'],
      ['mutatingwebhookconfiguration', 'policy.sigstore.dev'],
      ['deployment', 'webhook'],
    ]) {
      const gone = await c.kubectl(['get', kind as string, name as string, '-n', PC_NAMESPACE]);
      expect(gone.exitCode, `${kind}/${name}`).not.toBe(0);
    }
    await expectPoliciesUnchanged();
  });

  it("7. without policy-controller's finalizers, Signet writes every status", async () => {
    await runStep('finalizers');
    const objects = await storedObjects();
    for (const [key, object] of objects) expect(object.metadata.finalizers ?? [], key).toEqual([]);
    await poll('a Ready condition on every policy and TrustRoot', 60_000, async () => {
      const listed = await running().getJson<{
        items: { metadata: { name: string }; status?: { conditions?: { type: string }[] } }[];
      }>(['clusterimagepolicies,trustroots']);
      const missing = listed.items.filter((o) => !o.status?.conditions?.some((c) => c.type === 'Ready'));
      return missing.length === 0 ? true : missing.map((o) => o.metadata.name).join(', ');
    });
    await expectPoliciesUnchanged();
  });

  it("8-9. Signet's release owns the CRDs (its schema, no conversion, kept on uninstall), and nothing blocks", async () => {
    // This test's URL registration of the host-process Signet, out of the way of Helm's own.
    must(
      await running().kubectl([
        'delete',
        'validatingwebhookconfiguration/signet',
        'mutatingwebhookconfiguration/signet',
      ]),
    );
    await runStep('adopt-crds');
    const crd = await running().getJson<{
      metadata: { annotations: Record<string, string> };
      spec: {
        conversion: { strategy: string };
        versions: { name: string; storage: boolean; additionalPrinterColumns?: { name: string }[] }[];
      };
    }>(['crd', 'clusterimagepolicies.policy.sigstore.dev']);
    expect(crd.metadata.annotations).toMatchObject({
      'meta.helm.sh/release-name': 'signet',
      'helm.sh/resource-policy': 'keep',
    });
    expect(crd.spec.conversion).toEqual({ strategy: 'None' });
    expect(crd.spec.versions.find((v) => v.storage)?.name).toBe('v1beta1');
    expect(crd.spec.versions[0]?.additionalPrinterColumns?.map((c) => c.name)).toContain('Ready');
    const verify = await runStep('verify');
    expect(verify).toContain('0 blockers');
    log(verify);
    await expectPoliciesUnchanged();
  });

  it("and uninstalling Signet's chart keeps the CRDs and every policy", async () => {
    const { helm } = await ensureTools(['helm']);
    await runCommand(helm, ['uninstall', 'signet', '--namespace', SIGNET_NAMESPACE], {
      env: env(),
      timeoutMs: 120_000,
    });
    await expectPoliciesUnchanged();
  });
});
