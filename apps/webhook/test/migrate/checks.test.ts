// The migration checks on a cluster state built from policy-controller's own manifests (its CRDs
// and webhook configurations from its Go module's config/, its example policies), as its Helm
// chart installs them. Reading that state from a live cluster, and the guide's steps, run against
// a real API server in e2e/test/migration.test.ts.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { policyControllerModule } from '@signet/testbed';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { type Finding, migrationFindings } from '../../src/migrate/checks.js';
import type { ClusterState, KubeObject } from '../../src/migrate/cluster-state.js';

let upstream = '';
const read = async (path: string) => readFile(join(upstream, path), 'utf8');
const docs = (text: string) =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);

const owned = (crd: KubeObject): KubeObject => ({
  ...crd,
  metadata: {
    ...crd.metadata,
    labels: { 'app.kubernetes.io/managed-by': 'Helm' },
    annotations: {
      'meta.helm.sh/release-name': 'policy-controller',
      'meta.helm.sh/release-namespace': 'cosign-system',
    },
  },
});

let crds: KubeObject[] = [];
let webhooks: KubeObject[] = [];
let policies: KubeObject[] = [];

beforeAll(async () => {
  upstream = await policyControllerModule();
  crds = [
    ...docs(await read('config/300-clusterimagepolicy.yaml')),
    ...docs(await read('config/300-trustroot.yaml')),
  ].map(owned);
  webhooks = [
    ...docs(await read('config/500-webhook-configuration.yaml')),
    ...docs(await read('config/501-policy-webhook-configurations.yaml')),
  ];
  const policy = parse(
    (await read('examples/policies/signed-by-github-actions.yaml')).replace(/^#.*$/gm, ''),
  ) as KubeObject;
  policies = [
    { ...policy, metadata: { ...policy.metadata, finalizers: ['clusterimagepolicies.policy.sigstore.dev'] } },
    {
      apiVersion: 'policy.sigstore.dev/v1alpha1',
      kind: 'ClusterImagePolicy',
      metadata: { name: 'team-key', finalizers: ['clusterimagepolicies.policy.sigstore.dev'] },
      spec: {
        images: [{ glob: 'registry.example/**' }],
        authorities: [{ key: { secretRef: { name: 'team-pub' } } }],
      },
    },
  ];
});

function state(overrides: Partial<ClusterState> = {}): ClusterState {
  const [cip, tr] = crds;
  return {
    signetNamespace: 'signet-system',
    fromNamespace: 'cosign-system',
    signetRelease: 'signet',
    crds: { 'clusterimagepolicies.policy.sigstore.dev': cip, 'trustroots.policy.sigstore.dev': tr },
    releases: [
      {
        name: 'policy-controller',
        namespace: 'cosign-system',
        version: 1,
        status: 'deployed',
        chart: { name: 'policy-controller', version: '0.10.5' },
        manifestObjects: crds,
      },
    ],
    validatingWebhooks: webhooks.filter((w) => w.kind === 'ValidatingWebhookConfiguration'),
    mutatingWebhooks: webhooks.filter((w) => w.kind === 'MutatingWebhookConfiguration'),
    policies,
    policyVersion: 'v1alpha1',
    trustRoots: [],
    signetSecrets: [],
    signetConfigMaps: [],
    fromSecrets: ['team-pub', 'webhook-certs'],
    fromConfig: { metadata: { name: 'config-policy-controller' }, data: { 'no-match-policy': 'warn' } },
    fromDeployments: [{ metadata: { name: 'webhook' }, status: { readyReplicas: 1 } }],
    ...overrides,
  };
}

const bySubject = (findings: readonly Finding[], subject: string) =>
  findings.filter((f) => f.subject === subject);

describe('migrationFindings on a cluster running policy-controller from its chart', () => {
  it('blocks on the conversion webhook and on helm uninstall deleting the CRDs, saying how to fix both', async () => {
    const findings = await migrationFindings(state(), { namespace: 'signet-system' });
    const cip = bySubject(findings, 'crd/clusterimagepolicies.policy.sigstore.dev');
    expect(cip.map((f) => f.severity)).toEqual(['blocker', 'blocker']);
    expect(cip[0]?.message).toContain('the Service cosign-system/webhook');
    expect(cip[0]?.fix).toEqual([
      `kubectl patch crd clusterimagepolicies.policy.sigstore.dev --type=json -p '[{"op":"replace","path":"/spec/conversion","value":{"strategy":"None"}}]'`,
    ]);
    expect(cip[1]?.message).toContain('`helm uninstall policy-controller` deletes it');
    expect(cip[1]?.fix).toEqual([
      'kubectl annotate crd clusterimagepolicies.policy.sigstore.dev helm.sh/resource-policy=keep --overwrite',
      'helm upgrade policy-controller <repo>/policy-controller --version 0.10.5 --namespace cosign-system --reuse-values --set installCRDs=false',
    ]);
    // TrustRoot's CRD converts with None upstream: only the uninstall trap.
    expect(bySubject(findings, 'crd/trustroots.policy.sigstore.dev').map((f) => f.severity)).toEqual([
      'blocker',
    ]);
    expect(findings[0]?.severity).toBe('blocker');
  });

  it("finds policy-controller's finalizers, its webhooks, Secrets left in its namespace and its config", async () => {
    const findings = await migrationFindings(state(), { namespace: 'signet-system' });
    const finalizer = bySubject(findings, 'clusterimagepolicy/team-key').find((f) =>
      f.message.includes('finalizer'),
    );
    expect(finalizer?.fix).toEqual([
      `kubectl patch clusterimagepolicy team-key --type=json -p '[{"op":"test","path":"/metadata/finalizers/0","value":"clusterimagepolicies.policy.sigstore.dev"},{"op":"remove","path":"/metadata/finalizers/0"}]'`,
    ]);
    const webhook = bySubject(findings, 'validatingwebhookconfiguration/policy.sigstore.dev')[0];
    expect(webhook?.message).toContain('failurePolicy Fail');
    const secret = bySubject(findings, 'secret/signet-system/team-pub')[0];
    expect(secret?.severity).toBe('blocker');
    expect(secret?.message).toContain("it is in policy-controller's namespace cosign-system");
    expect(secret?.fix?.[0]).toMatch(
      /^kubectl get secret team-pub -n cosign-system -o yaml \| sed .* \| kubectl apply -n signet-system -f -$/,
    );
    const config = findings.find((f) => f.subject === 'configmap/cosign-system/config-policy-controller');
    expect(config?.message).toContain("policy-controller's config says no-match-policy: warn");
    expect(config?.fix?.[0]).toContain('--set config.noMatchPolicy=warn');
  });

  it('says which policies Signet compiles as they are, and which it cannot', async () => {
    const findings = await migrationFindings(state(), { namespace: 'signet-system' });
    const keyless = bySubject(findings, 'clusterimagepolicy/image-is-signed-by-github-actions').find((f) =>
      f.message.startsWith('Signet'),
    );
    expect(keyless).toMatchObject({
      severity: 'ok',
      message: expect.stringContaining('compiled, enforce: 1 authority'),
    });
    const team = bySubject(findings, 'clusterimagepolicy/team-key').find((f) =>
      f.message.startsWith('Signet'),
    );
    expect(team?.severity).toBe('blocker');
    expect(team?.message).toContain('AuthorityUnavailable');
  });

  it('a KMS policy is a warning: Signet fetches its key with its own identity, not checked here', async () => {
    const aws = parse(
      (await read('examples/policies/signed-by-aws-kms-key.yaml')).replace(/^#.*$/gm, ''),
    ) as KubeObject;
    const findings = await migrationFindings(state({ policies: [aws] }), { namespace: 'signet-system' });
    const kms = bySubject(findings, `clusterimagepolicy/${aws.metadata?.name}`);
    expect(kms.map((f) => f.severity)).toEqual(['warning']);
    expect(kms[0]?.message).toContain('uses a KMS key');
  });

  it('after the guide: nothing blocks', async () => {
    const adopted = crds.map((crd) => ({
      ...crd,
      spec: { ...(crd.spec as object), conversion: { strategy: 'None' } },
      metadata: {
        ...crd.metadata,
        annotations: {
          'meta.helm.sh/release-name': 'signet',
          'meta.helm.sh/release-namespace': 'signet-system',
          'helm.sh/resource-policy': 'keep',
        },
      },
    }));
    const findings = await migrationFindings(
      state({
        crds: {
          'clusterimagepolicies.policy.sigstore.dev': adopted[0],
          'trustroots.policy.sigstore.dev': adopted[1],
        },
        releases: [],
        validatingWebhooks: [],
        mutatingWebhooks: [],
        policies: policies.map((p) => ({ ...p, metadata: { ...p.metadata, finalizers: [] } })),
        signetSecrets: [
          {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 'team-pub', namespace: 'signet-system' },
            data: {},
          },
        ],
        signetConfigMaps: [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'config-policy-controller', namespace: 'signet-system' },
            data: { 'no-match-policy': 'warn' },
          },
        ],
        fromDeployments: [],
      }),
      { namespace: 'signet-system' },
    );
    // team-pub holds no data here: Signet says the authority is unavailable; with data it compiles.
    expect(findings.filter((f) => f.severity === 'blocker').map((f) => f.subject)).toEqual([
      'clusterimagepolicy/team-key',
    ]);
    expect(findings.filter((f) => f.severity === 'warning')).toEqual([]);
  });

  it('a CRD applied with kubectl, one still annotated for a gone release, and an unreadable list', async () => {
    const [cip, tr] = crds;
    const plain = { ...cip, metadata: { name: cip?.metadata?.name } } as KubeObject;
    const findings = await migrationFindings(
      state({
        crds: { 'clusterimagepolicies.policy.sigstore.dev': plain, 'trustroots.policy.sigstore.dev': tr },
        releases: [],
        policies: {
          error: 'conversion webhook for policy.sigstore.dev/v1alpha1 failed: service "webhook" not found',
        },
      }),
      { namespace: 'signet-system' },
    );
    expect(bySubject(findings, 'crd/clusterimagepolicies.policy.sigstore.dev')[1]?.message).toContain(
      'not owned by a Helm release',
    );
    expect(bySubject(findings, 'crd/trustroots.policy.sigstore.dev')[0]?.message).toContain(
      '(no such release)',
    );
    expect(bySubject(findings, 'clusterimagepolicies')[0]).toMatchObject({
      severity: 'blocker',
      message: expect.stringContaining('conversion webhook'),
    });
  });
});

describe("Signet's own ImagePolicies and exceptions", () => {
  const imagePolicy = (namespace: string, name: string): KubeObject => ({
    apiVersion: 'policy.signet.dev/v1alpha1',
    kind: 'ImagePolicy',
    metadata: { name, namespace },
    spec: { images: [{ glob: '**' }], authorities: [{ static: { action: 'fail' } }] },
  });
  const subjects = ['crd/imagepolicies.policy.signet.dev', 'crd/imagepolicyexceptions.policy.signet.dev'];

  it('are said to be Signet-only, never carried over from policy-controller, which ignores them', async () => {
    const findings = await migrationFindings(
      state({
        signetObjects: {
          ImagePolicy: [
            imagePolicy('shop', 'release'),
            imagePolicy('team-b', 'ci'),
            imagePolicy('shop', 'ci'),
          ],
          ImagePolicyException: [],
        },
      }),
      { namespace: 'signet-system' },
    );
    const [policies, exceptions] = subjects.map((s) => bySubject(findings, s));
    expect(policies).toEqual([
      {
        severity: 'ok',
        subject: subjects[0],
        message:
          "ImagePolicy (policy.signet.dev) is Signet's own; policy-controller has no such kind, so nothing of it is carried over. 3 in namespaces shop, team-b: only Signet enforces them (policy-controller, still running, ignores them)",
      },
    ]);
    expect(exceptions?.[0]?.message).toBe(
      "ImagePolicyException (policy.signet.dev) is Signet's own; policy-controller has no such kind, so nothing of it is carried over. None yet: teams write them once Signet runs",
    );
  });

  it('not installed, or not readable', async () => {
    const findings = await migrationFindings(
      state({ fromDeployments: [], signetObjects: { ImagePolicyException: { error: '403 Forbidden' } } }),
      { namespace: 'signet-system' },
    );
    expect(bySubject(findings, subjects[0] ?? '')[0]).toMatchObject({
      severity: 'ok',
      message: expect.stringContaining("Not installed: Signet's chart installs it"),
    });
    expect(bySubject(findings, subjects[1] ?? '')[0]).toMatchObject({
      severity: 'warning',
      message: expect.stringContaining('Cannot be listed: 403 Forbidden'),
    });
  });
});
