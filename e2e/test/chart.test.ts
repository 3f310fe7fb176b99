import { generateKeyPairSync } from 'node:crypto';
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureTools, freePort, httpStatus, runCommand, sourceModule } from '@signet/testbed';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type LocalCluster, startLocalCluster } from '../src/cluster/index.ts';
import { writeKubeconfig } from '../src/cluster/kubeconfig.ts';
import { createNamespace, must, poll, signetChartDir } from '../src/scenarios/kube.ts';
import { keyPolicy } from '../src/scenarios/policies.ts';
import {
  lastLoadedPolicies,
  SIGNET_NAMESPACE,
  signetCliPath,
  startSignet,
  startSignetProcess,
} from '../src/signet-webhook.ts';
import { podCreateReview, sendReview } from '../src/webhooks/admission-client.ts';

// The Helm chart against a real API server: `helm install`, `upgrade` and `uninstall` with Helm 3
// and Helm 4 (CRDs upgraded, kept on uninstall with the policies, NOTES); every option accepted by
// a server-side dry run (cert-manager's and prometheus-operator's own CRDs installed for the
// Certificate, Issuers, ServiceMonitor and PrometheusRule); `helm template` in both TLS modes, every
// object applied (CRDs, RBAC, Service, Deployment, PDB, webhook configurations, ConfigMap), the
// Deployment's Pods scheduled (kwok plays the kubelet), and the chart's own container arguments and
// RBAC exercised by running the real Signet CLI as the chart's ServiceAccount. Then every example
// policy in docs/examples/policies is applied against the chart's CRDs.

const log = (line: string) => process.stderr.write(`${line}\n`);
const RELEASE = 'signet';
const EXAMPLES_DIR = join(signetChartDir(), '..', '..', '..', 'docs', 'examples', 'policies');

interface K8sObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec?: Record<string, unknown>;
}

interface DeploymentObject extends K8sObject {
  readonly spec: {
    readonly template: {
      readonly spec: {
        readonly serviceAccountName: string;
        readonly containers: readonly { readonly args: readonly string[] }[];
        readonly volumes?: readonly {
          readonly name: string;
          readonly secret?: { readonly secretName: string };
        }[];
      };
    };
  };
}

interface WebhookConfigurationObject extends K8sObject {
  readonly webhooks: readonly { readonly clientConfig: { readonly caBundle?: string } }[];
}

describe('the Helm chart on a real API server', () => {
  let cluster: LocalCluster | undefined;
  let helm: string;
  let failed = false;
  const rendered: Record<'self-managed' | 'secret', { text: string; objects: K8sObject[] }> = {
    'self-managed': { text: '', objects: [] },
    secret: { text: '', objects: [] },
  };
  const running = (): LocalCluster => {
    if (!cluster) throw new Error('the cluster did not start');
    return cluster;
  };

  const template = async (values: readonly string[]) => {
    const home = running().runDir;
    const { stdout } = await runCommand(
      helm,
      ['template', RELEASE, signetChartDir(), '--namespace', SIGNET_NAMESPACE, '--include-crds', ...values],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home }, timeoutMs: 60_000 },
    );
    const objects = parseAllDocuments(stdout)
      .map((doc) => doc.toJS() as K8sObject | null)
      .filter((o): o is K8sObject => o !== null);
    return { text: stdout, objects };
  };
  const find = <T extends K8sObject>(mode: 'self-managed' | 'secret', kind: string): T => {
    const object = rendered[mode].objects.find((o) => o.kind === kind);
    if (!object) throw new Error(`no ${kind} in the ${mode} rendering`);
    return object as T;
  };

  beforeAll(async () => {
    cluster = await startLocalCluster({ onProgress: (event) => log(`cluster ${event.line}`) });
    ({ helm } = await ensureTools(['helm'], { onProgress: (event) => log(`tools: ${event.message}`) }));
    rendered['self-managed'] = await template([]);
    rendered.secret = await template([
      '--set',
      'tls.mode=secret',
      '--set',
      `tls.caBundle=${Buffer.from(cluster.caPem).toString('base64')}`,
    ]);
    await createNamespace(cluster, SIGNET_NAMESPACE);
  });

  beforeEach(() => {
    onTestFailed(() => {
      failed = true;
    });
  });

  afterAll(async () => {
    await cluster?.stop(failed ? { keepRunDir: true } : {});
    if (failed) log(`kept the run directory ${cluster?.runDir}`);
  });

  // Before anything else creates the CRDs: Helm owns them from the first install.
  it('helm install, upgrade and uninstall (Helm 3, then Helm 4): CRDs upgraded, kept on uninstall with the policies; NOTES', async () => {
    const c = running();
    const { helm4 } = await ensureTools(['helm4'], { onProgress: (event) => log(`tools: ${event.message}`) });
    // The chart as an older release would have had it: CRDs without the READY column.
    const older = join(c.runDir, 'older-chart');
    await cp(signetChartDir(), older, { recursive: true });
    for (const file of await readdir(join(older, 'files', 'crds'))) {
      const path = join(older, 'files', 'crds', file);
      const text = await readFile(path, 'utf8');
      await writeFile(path, text.replace(/ {8}- name: "Ready"\n(?: {10}.*\n){2}/g, ''));
    }
    const printerColumns = async () =>
      (
        await c.getJson<{ spec: { versions: { additionalPrinterColumns?: { name: string }[] }[] } }>([
          'crd',
          'clusterimagepolicies.policy.sigstore.dev',
        ])
      ).spec.versions[0]?.additionalPrinterColumns?.map((column) => column.name) ?? [];
    for (const binary of [helm, helm4]) {
      const run = (args: readonly string[]) =>
        runCommand(binary, [...args, '--namespace', SIGNET_NAMESPACE], {
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: c.runDir, KUBECONFIG: c.kubeconfig },
          timeoutMs: 120_000,
        });
      const installed = await run(['install', RELEASE, older, '--set', 'tuf.mirror=']);
      expect(installed.stdout).toContain(
        'kubectl label namespace NAMESPACE policy.sigstore.dev/include=true',
      );
      expect(installed.stdout).toContain('signet audit --namespace NAMESPACE');
      expect(await printerColumns()).not.toContain('Ready');
      await c.apply({
        apiVersion: 'policy.sigstore.dev/v1beta1',
        kind: 'ClusterImagePolicy',
        metadata: { name: 'survives-uninstall' },
        spec: { images: [{ glob: 'survivor.example/**' }], authorities: [{ static: { action: 'pass' } }] },
      });
      await run(['upgrade', RELEASE, signetChartDir(), '--reuse-values']);
      expect(await printerColumns()).toContain('Ready');
      await run(['uninstall', RELEASE]);
      must(
        await c.kubectl([
          'get',
          'crd',
          'clusterimagepolicies.policy.sigstore.dev',
          'trustroots.policy.sigstore.dev',
        ]),
      );
      must(await c.kubectl(['get', 'clusterimagepolicy', 'survives-uninstall']));
      must(await c.kubectl(['delete', 'clusterimagepolicy', 'survives-uninstall']));
      log(`${binary}: installed, upgraded (READY column added), uninstalled; the CRDs and the policy stayed`);
    }
  });

  it('renders every object the chart is meant to install, in both TLS modes', () => {
    const expected = [
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      'CustomResourceDefinition',
      'Deployment',
      'MutatingWebhookConfiguration',
      'PodDisruptionBudget',
      'Role',
      'RoleBinding',
      'Service',
      'ServiceAccount',
      'ValidatingWebhookConfiguration',
    ];
    for (const mode of ['self-managed', 'secret'] as const) {
      expect([...new Set(rendered[mode].objects.map((o) => o.kind))].sort(), mode).toEqual(expected);
    }
    const selfManaged = find<DeploymentObject>('self-managed', 'Deployment').spec.template.spec;
    expect(selfManaged.containers[0]?.args).toContain('--tls-self-managed');
    const secret = find<DeploymentObject>('secret', 'Deployment').spec.template.spec;
    expect(secret.containers[0]?.args).toContain('--tls-cert-file=/etc/signet/tls/tls.crt');
    expect(secret.volumes?.find((v) => v.name === 'tls')?.secret?.secretName).toBe('signet-webhook-tls');
  });

  it('tls.mode=secret: the API server accepts every object (server-side dry run)', async () => {
    const result = await running().kubectl(['apply', '--dry-run=server', '-f', '-'], {
      input: rendered.secret.text,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n').length).toBe(rendered.secret.objects.length);
  });

  it("every option is accepted by the API server (server-side dry run), with cert-manager's and prometheus-operator's CRDs", async () => {
    const c = running();
    const certManager = await sourceModule('cert-manager');
    const prometheusOperator = await sourceModule('prometheus-operator');
    for (const file of [
      join(certManager, 'deploy', 'crds', 'cert-manager.io_certificates.yaml'),
      join(certManager, 'deploy', 'crds', 'cert-manager.io_issuers.yaml'),
      join(
        prometheusOperator,
        'example',
        'prometheus-operator-crd',
        'monitoring.coreos.com_servicemonitors.yaml',
      ),
      join(
        prometheusOperator,
        'example',
        'prometheus-operator-crd',
        'monitoring.coreos.com_prometheusrules.yaml',
      ),
    ]) {
      must(await c.kubectl(['apply', '--server-side', '-f', file]));
    }
    must(
      await c.kubectl(
        [
          'wait',
          '--for=condition=Established',
          '--timeout=60s',
          'crd/certificates.cert-manager.io',
          'crd/servicemonitors.monitoring.coreos.com',
          'crd/prometheusrules.monitoring.coreos.com',
          'crd/issuers.cert-manager.io',
        ],
        { timeoutMs: 70_000 },
      ),
    );
    const everything = {
      replicaCount: 3,
      tls: { mode: 'cert-manager' },
      verificationRecords: { staleIfError: '6h', maxRecords: 2000, quota: true },
      tuf: { mirror: '' },
      webhook: {
        namespaceSelector: { matchLabels: { 'signet.dev/enforce': 'true' } },
        objectSelector: { matchExpressions: [{ key: 'signet.dev/skip', operator: 'DoesNotExist' }] },
        matchConditions: [{ name: 'not-dry-run', expression: '!request.dryRun' }],
        validate: { timeoutSeconds: 15 },
        mutate: { failurePolicy: 'Ignore' },
        policyValidation: { failurePolicy: 'Fail', timeoutSeconds: 5 },
      },
      metrics: {
        serviceMonitor: { enabled: true },
        prometheusRule: { enabled: true },
        dashboard: { enabled: true },
      },
      networkPolicy: {
        enabled: true,
        apiServerCIDRs: ['172.18.0.2/32', 'fd00:10::2/128'],
        webhookFrom: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }],
        metricsFrom: [
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
        ],
      },
      podDisruptionBudget: { maxUnavailable: 1 },
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
      ],
      priorityClassName: 'system-cluster-critical',
      startupProbe: { httpGet: { path: '/healthz', port: 'ops' }, failureThreshold: 30, periodSeconds: 2 },
      extraEnv: [{ name: 'HTTPS_PROXY', value: 'http://proxy.corp:3128' }],
      extraArgs: ['--max-request-bytes=2097152'],
      extraVolumes: [{ name: 'scratch', emptyDir: {} }],
      extraVolumeMounts: [{ name: 'scratch', mountPath: '/var/scratch' }],
      podAnnotations: { 'example.com/team': 'platform' },
      serviceAccount: {
        annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/signet' },
      },
    };
    // OpenShift's restricted-v2 (no fixed user or fsGroup), an existing ServiceAccount, a mirror and a digest.
    const restricted = {
      tuf: { mirror: '' },
      fullnameOverride: 'admission',
      image: { registry: 'mirror.internal:5000', digest: `sha256:${'a'.repeat(64)}` },
      podSecurityContext: { runAsUser: null, runAsGroup: null, fsGroup: null },
      serviceAccount: { create: false, name: 'default' },
    };
    for (const values of [
      everything,
      { replicaCount: 1, installCRDs: false, tuf: { mirror: '' } },
      restricted,
    ]) {
      const file = join(c.runDir, 'dry-run-values.json');
      await writeFile(file, JSON.stringify(values));
      const { text, objects } = await template(['-f', file]);
      const result = await c.kubectl(['apply', '--dry-run=server', '-f', '-'], { input: text });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout.trim().split('\n').length).toBe(objects.length);
      log(
        `dry run (${objects.length} objects): ${[...new Set(objects.map((o) => o.kind))].sort().join(', ')}`,
      );
    }
  });

  it('tls.mode=self-managed: applies for real, and the Deployment rolls out (kwok runs its Pods)', async () => {
    const c = running();
    const result = await c.kubectl(['apply', '-f', '-'], { input: rendered['self-managed'].text });
    expect(result.exitCode, result.stderr).toBe(0);
    log(result.stdout.trim());
    const status = await c.kubectl(
      [
        'rollout',
        'status',
        `deployment/${find('self-managed', 'Deployment').metadata.name}`,
        '-n',
        SIGNET_NAMESPACE,
        '--timeout=90s',
      ],
      { timeoutMs: 100_000 },
    );
    expect(status.exitCode, status.stderr).toBe(0);
    // The PodDisruptionBudget selects the chart's Pods (its status needs the disruption controller,
    // which the local control plane does not run).
    const pdb = await c.getJson<{ spec: { selector: { matchLabels: Record<string, string> } } }>([
      'poddisruptionbudget',
      find('self-managed', 'PodDisruptionBudget').metadata.name,
      '-n',
      SIGNET_NAMESPACE,
    ]);
    const selector = Object.entries(pdb.spec.selector.matchLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const pods = must(
      await c.kubectl(['get', 'pods', '-n', SIGNET_NAMESPACE, '-l', selector, '-o', 'name']),
    ).stdout;
    expect(pods.trim().split('\n').length).toBe(2);
  });

  it("runs the real CLI with the chart's arguments as the chart's ServiceAccount: policies load, TLS is self-managed", async () => {
    const c = running();
    const deployment = find<DeploymentObject>('self-managed', 'Deployment');
    const serviceAccount = deployment.spec.template.spec.serviceAccountName;
    const kubeconfig = await serviceAccountKubeconfig(c, serviceAccount);
    // Signet reads the example policies through the chart's RBAC: apply one first.
    must(await c.kubectl(['apply', '-f', join(EXAMPLES_DIR, 'signed-by-key.yaml')]));
    const [port, opsPort] = [await freePort(), await freePort()];
    const chartArgs = deployment.spec.template.spec.containers[0]?.args ?? [];
    // The chart refreshes the trust root from Sigstore's public TUF CDN into a Pod volume: neither
    // exists here (no traffic leaves the machine), so those flags are left out. The TUF path is
    // tested against a loopback TUF repository in the verifier and webhook suites.
    const args = chartArgs
      .filter((arg) => !/^--tuf-(mirror|cache-dir|root)=/.test(arg))
      .map((arg) =>
        arg.replace('$(POD_NAMESPACE)', SIGNET_NAMESPACE).replace('$(POD_NAME)', 'signet-chart-0'),
      )
      .map((arg) => (arg.startsWith('--port=') ? `--port=${port}` : arg))
      .map((arg) => (arg.startsWith('--ops-port=') ? `--ops-port=${opsPort}` : arg));
    const signet = await startSignetProcess({
      group: c.group,
      args: [
        signetCliPath(),
        ...args,
        '--host=127.0.0.1',
        '--ops-host=127.0.0.1',
        `--kubeconfig=${kubeconfig}`,
      ],
      opsUrl: `http://127.0.0.1:${opsPort}`,
    });
    try {
      // The background audit (on in the chart) scans once policies are loaded: its listing,
      // Lease and PolicyReports go through the same RBAC.
      await poll('the first audit scan', 60_000, async () =>
        (await signet.log()).includes('"audit scan finished"') ? true : 'no scan yet',
      );
      const signetLog = await signet.log();
      expect(lastLoadedPolicies(signetLog)).toEqual(['signed-by-release-key']);
      // The chart's RBAC is enough: no request was refused. (A 429 "storage is (re)initializing"
      // right after the CRDs were created is the API server asking to retry, which Signet does.)
      const errors = signetLog
        .split('\n')
        .filter((line) => line.includes('"level":"error"'))
        .filter((line) => !/"code":(429|"HTTP_429")|"status":429/.test(line));
      expect(errors).toEqual([]);
      expect(signetLog).not.toMatch(/forbidden/i);
      // Self-managed TLS: the Secret exists and both webhook configurations carry its CA.
      const secretName = args.find((a) => a.startsWith('--tls-secret='))?.split('=')[1] ?? '';
      const secret = await c.getJson<{ data: Record<string, string> }>([
        'secret',
        secretName,
        '-n',
        SIGNET_NAMESPACE,
      ]);
      expect(Object.keys(secret.data).sort()).toEqual(expect.arrayContaining(['tls.crt', 'tls.key']));
      for (const kind of ['validatingwebhookconfiguration', 'mutatingwebhookconfiguration']) {
        const config = await c.getJson<WebhookConfigurationObject>([kind, 'signet']);
        expect(config.webhooks[0]?.clientConfig.caBundle, kind).toMatch(/^[A-Za-z0-9+/]+=*$/);
      }
      // Verification records (on in the chart): the key Secret created and the records watched
      // through the chart's Role; the records are Signet's alone.
      expect(signetLog).toContain('verification records key loaded');
      const keySecret = args.find((a) => a.startsWith('--verification-records-secret='))?.split('=')[1] ?? '';
      must(await c.kubectl(['get', 'secret', keySecret, '-n', SIGNET_NAMESPACE]));
      const can = async (user: string, verb: string) =>
        (
          await c.kubectl([
            'auth',
            'can-i',
            verb,
            'verificationrecords.signet.dev',
            '-n',
            SIGNET_NAMESPACE,
            `--as=system:serviceaccount:${SIGNET_NAMESPACE}:${user}`,
          ])
        ).stdout.trim();
      for (const verb of ['list', 'watch', 'create', 'update', 'delete']) {
        expect(await can(serviceAccount, verb), verb).toBe('yes');
        expect(await can('default', verb), `default ${verb}`).toBe('no');
      }
    } finally {
      await signet.stop();
    }
  });

  it('accepts every example policy in docs/examples/policies against the CRDs', async () => {
    const c = running();
    const files = (await readdir(EXAMPLES_DIR)).filter((f) => f.endsWith('.yaml')).sort();
    expect(files.length).toBeGreaterThanOrEqual(6);
    const names: string[] = [];
    for (const file of files) {
      const text = await readFile(join(EXAMPLES_DIR, file), 'utf8');
      for (const doc of parseAllDocuments(text)) names.push((doc.toJS() as K8sObject).metadata.name);
      const result = await c.kubectl(['apply', '-f', join(EXAMPLES_DIR, file)]);
      expect(result.exitCode, `${file}: ${result.stderr}`).toBe(0);
    }
    const stored = must(
      await c.kubectl(['get', 'clusterimagepolicies,trustroots', '-o', 'jsonpath={.items[*].metadata.name}']),
    ).stdout.split(' ');
    expect(stored.sort()).toEqual([...names].sort());
  });

  it('rejects a policy the CRD schema forbids (the schema is not a pass-through)', async () => {
    const bad = {
      apiVersion: 'policy.sigstore.dev/v1beta1',
      kind: 'ClusterImagePolicy',
      metadata: { name: 'bad-action' },
      spec: { images: [{ glob: '**' }], authorities: [{ static: { action: 'allow' } }] },
    };
    const result = await running().kubectl(['apply', '--dry-run=server', '-f', '-'], {
      input: JSON.stringify(bad),
    });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('spec.authorities[0].static.action');
  });
  it('does not report ready, nor admit anything, while it cannot list the ClusterImagePolicies', async () => {
    const c = running();
    // A policy that requires a signature for 127.0.0.1:1/** (a port that refuses connections), and
    // a configuration that admits images no policy matches.
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await c.apply(
      keyPolicy({
        name: 'refusing-registry',
        images: ['127.0.0.1:1/**'],
        publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      }),
    );
    must(
      await c.kubectl([
        'patch',
        'configmap',
        'config-policy-controller',
        '-n',
        SIGNET_NAMESPACE,
        '-p',
        JSON.stringify({ data: { 'no-match-policy': 'allow' } }),
      ]),
    );
    const review = podCreateReview('default', 'probe', `127.0.0.1:1/app@sha256:${'a'.repeat(64)}`);
    // Control: as the chart's ServiceAccount, Signet sees the policy and denies (registry unreachable).
    const chartAccount = find<DeploymentObject>('self-managed', 'Deployment').spec.template.spec
      .serviceAccountName;
    const control = await startSignet({
      cluster: { ...c, kubeconfig: await serviceAccountKubeconfig(c, chartAccount) },
      insecureRegistries: ['127.0.0.1:1'],
    });
    try {
      await control.waitForPolicies(['refusing-registry']);
      const answer = await sendReview(control.url, '/validate', control.caPem, review);
      expect(answer.allowed, answer.message).toBe(false);
      log(`as the chart's ServiceAccount: denied: ${answer.message}`);
    } finally {
      await control.stop();
    }
    // An identity that may read everything Signet watches except ClusterImagePolicies.
    await c.apply(limitedIdentity('signet-cannot-list-policies'));
    const limited = await startSignet({
      cluster: { ...c, kubeconfig: await serviceAccountKubeconfig(c, 'signet-cannot-list-policies') },
      insecureRegistries: ['127.0.0.1:1'],
      waitFor: 'listening',
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 16; i++) {
        statuses.push((await httpStatus(`${limited.opsUrl}/readyz`, 2_000)) ?? 0);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const answer = await sendReview(limited.url, '/validate', limited.caPem, review);
      log(
        `without list on ClusterImagePolicies: /readyz ${[...new Set(statuses)].join(',')}; review ` +
          `${answer.allowed ? 'ALLOWED' : 'denied'} ${answer.message ?? ''}; loaded ${JSON.stringify(await limited.loadedPolicies())}`,
      );
      expect(statuses, 'Signet reported ready without having listed the ClusterImagePolicies').not.toContain(
        200,
      );
      expect(answer.allowed, 'Signet admitted an image a ClusterImagePolicy requires signed').toBe(false);
    } finally {
      await limited.stop();
    }
  });
});

/** A token kubeconfig for a ServiceAccount of Signet's namespace. */
async function serviceAccountKubeconfig(cluster: LocalCluster, account: string): Promise<string> {
  const token = must(
    await cluster.kubectl(['create', 'token', account, '-n', SIGNET_NAMESPACE, '--duration=1h']),
  ).stdout.trim();
  return writeKubeconfig(join(cluster.runDir, `${account}.kubeconfig`), {
    server: cluster.apiServerUrl,
    caPem: cluster.caPem,
    user: `system:serviceaccount:${SIGNET_NAMESPACE}:${account}`,
    token,
  });
}

/** A ServiceAccount that may read TrustRoots, ConfigMaps and Secrets, but not ClusterImagePolicies. */
function limitedIdentity(name: string): object[] {
  const subjects = [{ kind: 'ServiceAccount', name, namespace: SIGNET_NAMESPACE }];
  const read = ['get', 'list', 'watch'];
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: SIGNET_NAMESPACE } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name },
      rules: [{ apiGroups: ['policy.sigstore.dev'], resources: ['trustroots'], verbs: read }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name, namespace: SIGNET_NAMESPACE },
      rules: [{ apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: read }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace: SIGNET_NAMESPACE },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects,
    },
  ];
}
