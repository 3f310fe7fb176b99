// Every chart option, rendered by the real helm (3 and 4): what each value changes in the objects,
// and which values the schema or the templates refuse, with the message a user sees.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  CHART_DIR,
  HELM_MAJORS,
  type HelmMajor,
  type K8sObject,
  NAMESPACE,
  only,
  RELEASE,
  renderChart,
  renderError,
  runHelm,
} from './render.js';

interface Container {
  readonly args: string[];
  readonly env: { name: string; value?: string }[];
  readonly volumeMounts: { name: string; mountPath: string }[];
  readonly readinessProbe?: Record<string, unknown>;
  readonly livenessProbe?: Record<string, unknown>;
  readonly startupProbe?: Record<string, unknown>;
  readonly resources: Record<string, unknown>;
}

interface PodTemplate {
  readonly metadata: { labels: Record<string, string>; annotations: Record<string, string> };
  readonly spec: {
    readonly containers: Container[];
    readonly volumes: { name: string; secret?: { secretName: string } }[];
    readonly priorityClassName?: string;
    readonly topologySpreadConstraints?: Record<string, unknown>[];
    readonly serviceAccountName: string;
  };
}

const pod = (objects: readonly K8sObject[]) =>
  only<{ spec: { template: PodTemplate } }>(objects, 'Deployment').spec.template;
const container = (objects: readonly K8sObject[]) => pod(objects).spec.containers[0] as Container;
const kinds = (objects: readonly K8sObject[]) => [...new Set(objects.map((o) => o.kind))].sort();

const BASE_KINDS = [
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

describe.each(HELM_MAJORS)('the chart under %s', (major: HelmMajor) => {
  it('renders the base objects with the defaults, and lints clean', async () => {
    const objects = await renderChart(major);
    expect(kinds(objects)).toEqual(BASE_KINDS);
    const lint = await runHelm(major, ['lint', CHART_DIR, '--strict']);
    expect(lint.ok, lint.stderr || lint.stdout).toBe(true);
    expect(lint.stdout).toContain('0 chart(s) failed');
  });

  it('refuses wrong types and unknown enum values at render time', async () => {
    const refusals: [object, string][] = [
      [{ webhook: { failurePolicy: 'Maybe' } }, "at '/webhook/failurePolicy': value must be one of 'Fail', 'Ignore'"],
      [{ tls: { mode: 'bogus' } }, "at '/tls/mode': value must be one of 'self-managed', 'secret', 'cert-manager'"],
      [{ replicaCount: 'two' }, "at '/replicaCount': got string, want integer"],
      [{ webhook: { timeoutSeconds: 31 } }, '/webhook/timeoutSeconds'],
      [{ webhook: { validate: { failurePolicy: 'Never' } } }, '/webhook/validate/failurePolicy'],
      [{ webhook: { policyValidation: { enabled: 'yes' } } }, '/webhook/policyValidation/enabled'],
      [{ webhook: { namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'Is' }] } } }, 'operator'],
      [{ extraArgs: '--log-level=debug' }, "at '/extraArgs': got string, want array"],
      [{ podAnnotations: { a: 1 } }, '/podAnnotations/a'],
      [{ podDisruptionBudget: { enabled: 'auto' } }, '/podDisruptionBudget/enabled'],
      [{ verification: { cacheTTL: 'five minutes' } }, '/verification/cacheTTL'],
      [{ verification: { signatureFormatDefault: 'notation' } }, '/verification/signatureFormatDefault'],
      [{ config: { noMatchPolicy: 'maybe' } }, '/config/noMatchPolicy'],
      [{ metrics: { serviceMonitor: { enabled: 1 } } }, '/metrics/serviceMonitor/enabled'],
      [{ tls: { certManager: { issuerRef: { kind: 'Vault' } } } }, '/tls/certManager/issuerRef/kind'],
    ];
    for (const [values, message] of refusals) {
      const error = await renderError(major, values);
      expect(error, JSON.stringify(values)).toContain("values don't meet the specifications of the schema");
      expect(error, JSON.stringify(values)).toContain(message);
    }
  });

  it("verification.signatureFormatDefault: both formats by default, or policy-controller's legacy alone", async () => {
    const args = async (values: object) => container(await renderChart(major, values)).args;
    expect(await args({})).toContain('--signature-format-default=legacy,bundle');
    const upstream = await args({ verification: { signatureFormatDefault: 'legacy' } });
    expect(upstream).toContain('--signature-format-default=legacy');
    expect(upstream).not.toContain('--signature-format-default=legacy,bundle');
  });

  it('tls.mode=secret without a caBundle fails with a message; with one it mounts the Secret', async () => {
    const error = await renderError(major, { tls: { mode: 'secret' } });
    expect(error).toContain('tls.mode=secret needs tls.caBundle');
    expect(await renderError(major, { tls: { caBundle: 'Q0E=' } })).toContain(
      'tls.caBundle is only used with tls.mode=secret',
    );
    const objects = await renderChart(major, { tls: { mode: 'secret', caBundle: 'Q0E=', secretName: 'mine' } });
    expect(container(objects).args).toContain('--tls-cert-file=/etc/signet/tls/tls.crt');
    expect(pod(objects).spec.volumes).toContainEqual({ name: 'tls', secret: { secretName: 'mine' } });
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      const hooks = only<{ webhooks: { clientConfig: { caBundle?: string } }[] }>(objects, kind).webhooks;
      for (const hook of hooks) expect(hook.clientConfig.caBundle).toBe('Q0E=');
    }
  });

  it('tls.clientAuth: mounts the client CA from a ConfigMap or a Secret and asks callers for a certificate', async () => {
    const plain = await renderChart(major, {});
    expect(container(plain).args.some((arg) => arg.startsWith('--client-'))).toBe(false);
    const fromConfigMap = await renderChart(major, { tls: { clientAuth: { configMap: 'apiserver-ca' } } });
    expect(container(fromConfigMap).args).toEqual(
      expect.arrayContaining(['--client-ca-file=/etc/signet/client-ca/ca.crt', '--client-auth=required']),
    );
    expect(container(fromConfigMap).volumeMounts).toContainEqual({
      name: 'client-ca',
      mountPath: '/etc/signet/client-ca',
      readOnly: true,
    });
    expect(pod(fromConfigMap).spec.volumes).toContainEqual({
      name: 'client-ca',
      configMap: { name: 'apiserver-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] },
    });
    const fromSecret = await renderChart(major, {
      tls: { clientAuth: { secret: 'apiserver-ca', key: 'bundle.pem', mode: 'if-given' } },
    });
    expect(container(fromSecret).args).toEqual(
      expect.arrayContaining(['--client-ca-file=/etc/signet/client-ca/bundle.pem', '--client-auth=if-given']),
    );
    expect(pod(fromSecret).spec.volumes).toContainEqual({
      name: 'client-ca',
      secret: { secretName: 'apiserver-ca', items: [{ key: 'bundle.pem', path: 'bundle.pem' }] },
    });
    expect(await renderError(major, { tls: { clientAuth: { configMap: 'a', secret: 'b' } } })).toContain(
      'tls.clientAuth takes the client CA from a configMap or from a secret, not both',
    );
    expect(await renderError(major, { tls: { clientAuth: { configMap: 'a', mode: 'optional' } } })).toContain(
      'mode',
    );
  });

  it('tls.mode=cert-manager: a Certificate for the Service names, a CA of its own or your issuer, and the CA injected', async () => {
    const objects = await renderChart(major, { tls: { mode: 'cert-manager' } });
    expect(kinds(objects)).toEqual([...BASE_KINDS, 'Certificate', 'Issuer'].sort());
    const serving = only<{ spec: Record<string, unknown> }>(objects, 'Certificate', `${RELEASE}-webhook-tls`);
    expect(serving.spec).toMatchObject({
      secretName: 'signet-webhook-tls',
      dnsNames: [`${RELEASE}-webhook`, `${RELEASE}-webhook.${NAMESPACE}`, `${RELEASE}-webhook.${NAMESPACE}.svc`],
      issuerRef: { name: `${RELEASE}-webhook-ca`, kind: 'Issuer', group: 'cert-manager.io' },
    });
    const ca = only<{ spec: Record<string, unknown> }>(objects, 'Certificate', `${RELEASE}-webhook-ca`);
    expect(ca.spec).toMatchObject({ isCA: true, issuerRef: { name: `${RELEASE}-webhook-selfsigned` } });
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      expect(only(objects, kind).metadata.annotations).toEqual({
        'cert-manager.io/inject-ca-from': `${NAMESPACE}/${RELEASE}-webhook-tls`,
      });
    }
    expect(container(objects).args).toContain('--tls-key-file=/etc/signet/tls/tls.key');
    const own = await renderChart(major, {
      tls: { mode: 'cert-manager', certManager: { issuerRef: { name: 'corp', kind: 'ClusterIssuer' } } },
    });
    expect(own.filter((o) => o.kind === 'Issuer')).toEqual([]);
    expect(only<{ spec: { issuerRef: unknown } }>(own, 'Certificate').spec.issuerRef).toEqual({
      name: 'corp',
      kind: 'ClusterIssuer',
    });
  });

  it('PodDisruptionBudget: on with 2 replicas, off with 1, as asked otherwise', async () => {
    const pdbs = async (values: object) =>
      (await renderChart(major, values)).filter((o) => o.kind === 'PodDisruptionBudget') as unknown as {
        spec: Record<string, unknown>;
      }[];
    expect((await pdbs({}))[0]?.spec.minAvailable).toBe(1);
    expect(await pdbs({ replicaCount: 1 })).toEqual([]);
    expect(await pdbs({ replicaCount: 1, podDisruptionBudget: { enabled: true } })).toHaveLength(1);
    expect(await pdbs({ podDisruptionBudget: { enabled: false } })).toEqual([]);
    const [max] = await pdbs({ replicaCount: 3, podDisruptionBudget: { maxUnavailable: 1 } });
    expect(max?.spec.maxUnavailable).toBe(1);
    expect(max?.spec.minAvailable).toBeUndefined();
  });

  it('passes the Pod options through: spread, priority, resources, probes, env, volumes, args, labels, annotations', async () => {
    const objects = await renderChart(major, {
      topologySpreadConstraints: [
        { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
        {
          maxSkew: 2,
          topologyKey: 'kubernetes.io/hostname',
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: { matchLabels: { mine: 'yes' } },
        },
      ],
      priorityClassName: 'system-cluster-critical',
      resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '1Gi' } },
      readinessProbe: { httpGet: { path: '/readyz', port: 'ops' }, periodSeconds: 2, failureThreshold: 10 },
      livenessProbe: { httpGet: { path: '/healthz', port: 'ops' }, timeoutSeconds: 5 },
      startupProbe: { httpGet: { path: '/healthz', port: 'ops' }, failureThreshold: 30 },
      extraEnv: [{ name: 'HTTPS_PROXY', value: 'http://proxy:3128' }],
      extraVolumes: [{ name: 'cache', emptyDir: {} }],
      extraVolumeMounts: [{ name: 'cache', mountPath: '/var/cache/signet' }],
      extraArgs: ['--max-request-bytes=2097152'],
      podLabels: { team: 'platform' },
      podAnnotations: { 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'true' },
      serviceAccount: { annotations: { 'iam.gke.io/gcp-service-account': 'signet@p.iam.gserviceaccount.com' } },
    });
    const template = pod(objects);
    const selector = { 'app.kubernetes.io/name': 'signet', 'app.kubernetes.io/instance': RELEASE };
    expect(template.spec.topologySpreadConstraints?.[0]).toEqual({
      maxSkew: 1,
      topologyKey: 'topology.kubernetes.io/zone',
      whenUnsatisfiable: 'ScheduleAnyway',
      labelSelector: { matchLabels: { ...selector, 'app.kubernetes.io/component': 'admission-webhook' } },
    });
    expect(template.spec.topologySpreadConstraints?.[1]?.labelSelector).toEqual({ matchLabels: { mine: 'yes' } });
    expect(template.spec.priorityClassName).toBe('system-cluster-critical');
    const c = container(objects);
    // Helm merges maps: the default CPU limit stays unless set to null.
    expect(c.resources).toEqual({ requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } });
    expect(c.readinessProbe).toEqual({ httpGet: { path: '/readyz', port: 'ops' }, periodSeconds: 2, failureThreshold: 10 });
    // Merged over the defaults (a field set to null removes it).
    expect(c.livenessProbe).toEqual({
      httpGet: { path: '/healthz', port: 'ops' },
      periodSeconds: 10,
      failureThreshold: 3,
      timeoutSeconds: 5,
    });
    expect(c.startupProbe).toMatchObject({ failureThreshold: 30 });
    expect(c.env).toContainEqual({ name: 'HTTPS_PROXY', value: 'http://proxy:3128' });
    expect(c.volumeMounts).toContainEqual({ name: 'cache', mountPath: '/var/cache/signet' });
    expect(template.spec.volumes).toContainEqual({ name: 'cache', emptyDir: {} });
    expect(c.args.at(-1)).toBe('--max-request-bytes=2097152');
    expect(template.metadata.labels.team).toBe('platform');
    expect(template.metadata.annotations['cluster-autoscaler.kubernetes.io/safe-to-evict']).toBe('true');
    expect(only(objects, 'ServiceAccount').metadata.annotations).toEqual({
      'iam.gke.io/gcp-service-account': 'signet@p.iam.gserviceaccount.com',
    });
    // Defaults: the probes on the operations port, no startup probe.
    const defaults = container(await renderChart(major));
    expect(defaults.readinessProbe).toEqual({
      httpGet: { path: '/readyz', port: 'ops' },
      periodSeconds: 5,
      failureThreshold: 3,
    });
    expect(defaults.startupProbe).toBeUndefined();
  });

  it('metrics: a metrics port on the Service, and on request a ServiceMonitor, a PrometheusRule and the dashboard', async () => {
    const service = only<{ spec: { ports: { name: string; port: number; targetPort: string }[] } }>(
      await renderChart(major),
      'Service',
    );
    expect(service.spec.ports).toContainEqual({ name: 'metrics', port: 8080, targetPort: 'ops', protocol: 'TCP' });
    const objects = await renderChart(major, {
      metrics: {
        serviceMonitor: { enabled: true, labels: { release: 'prometheus' } },
        prometheusRule: { enabled: true },
        dashboard: { enabled: true, namespace: 'monitoring' },
      },
    });
    const monitor = only<{ metadata: K8sObject['metadata']; spec: Record<string, unknown> }>(objects, 'ServiceMonitor');
    expect(monitor.metadata.labels?.release).toBe('prometheus');
    expect(monitor.spec).toMatchObject({
      selector: { matchLabels: { 'app.kubernetes.io/name': 'signet', 'app.kubernetes.io/instance': RELEASE } },
      endpoints: [{ port: 'metrics', path: '/metrics', interval: '30s' }],
    });
    const rule = only<{ spec: { groups: { rules: { alert: string }[] }[] } }>(objects, 'PrometheusRule');
    expect(rule.spec.groups[0]?.rules.map((r) => r.alert)).toEqual([
      'SignetDown',
      'SignetNotReady',
      'SignetDenialSpike',
      'SignetInfrastructureFailures',
      'SignetRegistryErrors',
      'SignetVerificationSlow',
      'SignetPolicyInvalid',
      'SignetKmsKeysStale',
      'SignetTrustRootsStale',
      'SignetServingCertificateExpiring',
      'SignetAuditScanStale',
    ]);
    // The stale-scan alert only where there is a background scan.
    const noAudit = await renderChart(major, {
      audit: { enabled: false },
      metrics: { prometheusRule: { enabled: true, staleKmsKeysFor: '2h', certificateExpiryWarningSeconds: 86400 } },
    });
    const rules = only<{ spec: { groups: { rules: { alert: string; expr: string; for: string }[] }[] } }>(
      noAudit,
      'PrometheusRule',
    ).spec.groups[0]?.rules;
    expect(rules?.map((r) => r.alert)).not.toContain('SignetAuditScanStale');
    expect(rules?.find((r) => r.alert === 'SignetKmsKeysStale')?.for).toBe('2h');
    expect(rules?.find((r) => r.alert === 'SignetServingCertificateExpiring')?.expr).toMatch(/< 86400$/);
    expect(await renderError(major, { metrics: { prometheusRule: { staleTrustRootsFor: 'six hours' } } })).toContain(
      '/metrics/prometheusRule/staleTrustRootsFor',
    );
    const dashboard = only<{ metadata: K8sObject['metadata']; data: Record<string, string> }>(
      objects,
      'ConfigMap',
      `${RELEASE}-webhook-dashboard`,
    );
    expect(dashboard.metadata.namespace).toBe('monitoring');
    expect(dashboard.metadata.labels?.grafana_dashboard).toBe('1');
    expect(JSON.parse(dashboard.data['signet.json'] ?? '')).toEqual(
      JSON.parse(readFileSync(`${CHART_DIR}/files/dashboards/signet.json`, 'utf8')),
    );
    expect(await renderError(major, { metrics: { service: { enabled: false }, serviceMonitor: { enabled: true } } })).toContain(
      'metrics.serviceMonitor.enabled needs metrics.service.enabled',
    );
  });

  it('image: a mirror registry and a digest; securityContexts overridable; an existing ServiceAccount; fullnameOverride', async () => {
    const image = async (values: object) => container(await renderChart(major, values)) as unknown as { image: string };
    expect((await image({})).image).toMatch(/^ghcr\.io\/signet-dev\/signet:\S+$/);
    const digest = `sha256:${'a'.repeat(64)}`;
    expect((await image({ image: { registry: 'mirror.internal:5000/hub', tag: 'v1', digest } })).image).toBe(
      `mirror.internal:5000/hub/ghcr.io/signet-dev/signet@${digest}`,
    );
    expect((await image({ image: { repository: 'corp/signet', tag: 'v2' } })).image).toBe('corp/signet:v2');
    expect(await renderError(major, { image: { digest: 'latest' } })).toContain('/image/digest');

    const defaults = await renderChart(major);
    const podContext = (objects: readonly K8sObject[]) =>
      (pod(objects).spec as unknown as { securityContext?: Record<string, unknown> }).securityContext;
    const containerContext = (objects: readonly K8sObject[]) =>
      (container(objects) as unknown as { securityContext?: Record<string, unknown> }).securityContext;
    expect(podContext(defaults)).toEqual({
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      fsGroup: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(containerContext(defaults)).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    // OpenShift restricted-v2: no fixed user or fsGroup.
    const openshift = await renderChart(major, {
      podSecurityContext: { runAsUser: null, runAsGroup: null, fsGroup: null },
      securityContext: { runAsNonRoot: true },
    });
    expect(podContext(openshift)).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(containerContext(openshift)).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true });

    const existing = await renderChart(major, { serviceAccount: { create: false, name: 'platform-signet' } });
    expect(existing.some((o) => o.kind === 'ServiceAccount')).toBe(false);
    expect(pod(existing).spec.serviceAccountName).toBe('platform-signet');
    for (const binding of existing.filter((o) => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding'))
      expect((binding as unknown as { subjects: { name: string }[] }).subjects[0]?.name).toBe('platform-signet');
    const named = await renderChart(major, { serviceAccount: { name: 'signet-sa' } });
    expect(only(named, 'ServiceAccount').metadata.name).toBe('signet-sa');
    expect(pod(named).spec.serviceAccountName).toBe('signet-sa');

    const renamed = await renderChart(major, { fullnameOverride: 'admission' });
    expect(only(renamed, 'Deployment').metadata.name).toBe('admission');
    expect(only(renamed, 'Service').metadata.name).toBe('admission');
    expect(container(renamed).args).toContain('--service-name=admission');
    const hooks = only<{ webhooks: { clientConfig: { service?: { name: string } } }[] }>(
      renamed,
      'ValidatingWebhookConfiguration',
    ).webhooks;
    for (const hook of hooks) expect(hook.clientConfig.service?.name).toBe('admission');
    expect(await renderError(major, { fullnameOverride: 'Not_A_Name' })).toContain('/fullnameOverride');
  });

  it('CRDs: the files, as templates that helm upgrade upgrades, kept on uninstall; none with installCRDs=false', async () => {
    const ours = (o: K8sObject) =>
      o.kind === 'CustomResourceDefinition' && /\.policy\.(sigstore|signet)\.dev$/.test(o.metadata.name);
    const crds = (await renderChart(major)).filter(ours);
    const files = readdirSync(`${CHART_DIR}/files/crds`).map((f) => parse(readFileSync(`${CHART_DIR}/files/crds/${f}`, 'utf8')));
    expect(crds).toEqual(files);
    for (const crd of crds) expect(crd.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    const without = await renderChart(major, { installCRDs: false });
    expect(without.some(ours)).toBe(false);
  });
});

describe.each(HELM_MAJORS)('verification records under %s', (major: HelmMajor) => {
  it('on by default: the CRD, the Role rule and the flags; a quota on the count when asked; off: none of them', async () => {
    const objects = await renderChart(major);
    const crd = objects.find((o) => o.kind === 'CustomResourceDefinition' && o.metadata.name === 'verificationrecords.signet.dev');
    expect(crd).toEqual(parse(readFileSync(`${CHART_DIR}/files/verification-records/signet.dev_verificationrecords.yaml`, 'utf8')));
    const role = only<{ rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] }>(objects, 'Role');
    expect(role.rules).toContainEqual({
      apiGroups: ['signet.dev'],
      resources: ['verificationrecords'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
    });
    // Nobody else is given the records: no ClusterRole (Signet's, or those it aggregates) names them.
    const clusterRoles = objects.filter((o) => o.kind === 'ClusterRole') as unknown as {
      rules: { apiGroups: string[] }[];
    }[];
    expect(clusterRoles.length).toBeGreaterThan(0);
    expect(clusterRoles.flatMap((role) => role.rules.flatMap((r) => r.apiGroups))).not.toContain('signet.dev');
    expect(container(objects).args).toEqual(
      expect.arrayContaining([
        '--verification-records',
        '--stale-if-error=24h',
        '--max-verification-records=5000',
        '--verification-records-secret=signet-webhook-records-key',
      ]),
    );
    expect(objects.some((o) => o.kind === 'ResourceQuota')).toBe(false);
    const quota = await renderChart(major, { verificationRecords: { quota: true } });
    expect(only<{ spec: { hard: Record<string, string> } }>(quota, 'ResourceQuota').spec.hard).toEqual({
      'count/verificationrecords.signet.dev': '6000',
    });
    const tuned = await renderChart(major, { verificationRecords: { staleIfError: '0', maxRecords: 100, quota: false } });
    expect(container(tuned).args).toEqual(expect.arrayContaining(['--stale-if-error=0', '--max-verification-records=100']));
    expect(tuned.some((o) => o.kind === 'ResourceQuota')).toBe(false);
    const off = await renderChart(major, { verificationRecords: { enabled: false } });
    expect(off.some((o) => o.metadata.name === 'verificationrecords.signet.dev' || o.kind === 'ResourceQuota')).toBe(false);
    expect(container(off).args.some((a: string) => a.includes('verification-records'))).toBe(false);
    expect(JSON.stringify(only(off, 'Role'))).not.toContain('signet.dev');
    expect(await renderError(major, { verificationRecords: { maxRecords: 20_000 } })).toContain('/verificationRecords/maxRecords');
    expect(await renderError(major, { verificationRecords: { staleIfError: 'a day' } })).toContain('/verificationRecords/staleIfError');
  });
});

// Helm 3's `install --dry-run=client` still asks a cluster for its version, so NOTES are rendered
// with Helm 4 here; e2e/test/chart.test.ts installs the chart with both majors and reads them too.
describe('the chart NOTES under helm4', () => {
  it('NOTES.txt says what to do next: label a namespace, apply a policy, run signet audit', async () => {
    const notes = async (values: object) => {
      const run = await runHelm(
        'helm4',
        ['install', RELEASE, CHART_DIR, '--namespace', NAMESPACE, '--dry-run=client'],
        values,
      );
      expect(run.ok, run.stderr).toBe(true);
      return run.stdout.slice(run.stdout.indexOf('NOTES:'));
    };
    const text = await notes({});
    expect(text).toContain('kubectl label namespace NAMESPACE policy.sigstore.dev/include=true');
    expect(text).toContain('kubectl get clusterimagepolicies');
    expect(text).toContain('signet audit --namespace NAMESPACE');
    expect(text).not.toContain('replicaCount=1');
    expect(await notes({ replicaCount: 1 })).toContain('replicaCount=1 with failurePolicy Fail');
    expect(await notes({ installCRDs: false })).toContain('signet migrate check');
  });
});
