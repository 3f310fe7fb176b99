import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseGoDuration } from '../src/http/duration.js';

const chart = new URL('../chart/', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, chart), 'utf8');

describe('the Helm chart', () => {
  it('runs two non-root replicas with a read-only root filesystem, limits and a PodDisruptionBudget', () => {
    const values = parse(read('values.yaml'));
    expect(values.replicaCount).toBe(2);
    expect(values.resources.limits).toBeDefined();
    expect(values.resources.requests).toBeDefined();
    expect(values.podDisruptionBudget.minAvailable).toBe(1);
    // The defaults (overridable, e.g. for OpenShift's restricted-v2; rendered in test/chart/options.test.ts).
    expect(values.podSecurityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(values.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(read('templates/pdb.yaml')).toContain('kind: PodDisruptionBudget');
    // Rendered webhooks, PDB toggles and every other option: test/chart/*.test.ts.
  });

  it('lets a replica leave without failing reviews: preStop sleep, then drain and grace, inside the grace period', () => {
    const { shutdown } = parse(read('values.yaml'));
    const seconds = (d: string) => (parseGoDuration(d) ?? Number.NaN) / 1000;
    expect(shutdown.preStopSeconds).toBeGreaterThan(0);
    expect(seconds(shutdown.drain)).toBeGreaterThan(0);
    expect(shutdown.preStopSeconds + seconds(shutdown.drain) + seconds(shutdown.grace)).toBeLessThan(
      shutdown.terminationGracePeriodSeconds,
    );
    const deployment = read('templates/deployment.yaml');
    expect(deployment).toContain('seconds: {{ .Values.shutdown.preStopSeconds }}');
    expect(deployment).toContain(
      'terminationGracePeriodSeconds: {{ .Values.shutdown.terminationGracePeriodSeconds }}',
    );
    expect(deployment).toContain('- --shutdown-drain={{ .Values.shutdown.drain }}');
    expect(deployment).toContain('- --shutdown-grace={{ .Values.shutdown.grace }}');
  });

  it('ships the policy.sigstore.dev CRDs with both ClusterImagePolicy versions', () => {
    const crds = readdirSync(new URL('files/crds/', chart)).map((f) => parse(read(`files/crds/${f}`)));
    const cip = crds.find((c) => c.spec.names.kind === 'ClusterImagePolicy');
    expect(cip.spec.versions.map((v: { name: string; storage: boolean }) => [v.name, v.storage])).toEqual([
      ['v1alpha1', false],
      ['v1beta1', true],
    ]);
    const authority =
      cip.spec.versions[1].schema.openAPIV3Schema.properties.spec.properties.authorities.items.properties;
    expect(Object.keys(authority)).toEqual([
      'name',
      'key',
      'keyless',
      'static',
      'source',
      'ctlog',
      'attestations',
      'rfc3161timestamp',
      'signatureFormat',
    ]);
    expect(crds.find((c) => c.spec.names.kind === 'TrustRoot')?.spec.scope).toBe('Cluster');
  });

  it('refreshes the default trust root from TUF into a writable cache volume, and passes KMS settings', () => {
    const values = parse(read('values.yaml'));
    expect(values.tuf).toMatchObject({ mirror: 'https://tuf-repo-cdn.sigstore.dev', refresh: '1h' });
    expect(values.kms).toMatchObject({ refresh: '5m', env: [] });
    const deployment = read('templates/deployment.yaml');
    for (const needle of [
      '- --tuf-mirror={{ . }}',
      '- --tuf-cache-dir=/var/cache/signet/tuf',
      '- --tuf-root=/etc/signet/tuf-root/root.json',
      '- --kms-refresh={{ .Values.kms.refresh }}',
      'mountPath: /var/cache/signet',
      'sizeLimit: {{ .Values.tuf.cacheSizeLimit }}',
    ]) {
      expect(deployment).toContain(needle);
    }
  });
});

interface Container {
  args: string[];
  env: unknown[];
  volumeMounts: unknown[];
}

describe('the Helm chart rendered by the real helm: registry access', () => {
  it('passes cloud credentials, a registry CA from a ConfigMap or Secret, ServiceAccount annotations, Pod labels and extra env', async () => {
    const testbed = await import('@signet/testbed');
    const { helm } = await testbed.ensureTools(['helm'], {
      onProgress: (event) => console.log(`testbed: ${event.message}`),
    });
    const dir = await testbed.createRunDir('signet-chart-registry-');
    const { writeFile, rm } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const { fileURLToPath } = await import('node:url');
    try {
      const render = async (values: string) => {
        const file = join(dir, 'values.yaml');
        await writeFile(file, values);
        const { stdout } = await testbed.runCommand(
          helm,
          ['template', 'signet', fileURLToPath(chart), '--namespace', 'signet-system', '-f', file],
          { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir }, timeoutMs: 60_000 },
        );
        const objects = stdout
          .split(/^---$/m)
          .map((doc) => parse(doc, { uniqueKeys: false }) as { kind?: string } | null)
          .filter((o): o is { kind?: string } => o !== null);
        const deployment = objects.find((o) => o.kind === 'Deployment') as {
          spec: {
            template: {
              metadata: { labels: Record<string, string> };
              spec: { containers: Container[]; volumes: unknown[] };
            };
          };
        };
        const account = objects.find((o) => o.kind === 'ServiceAccount') as {
          metadata: { annotations?: object };
        };
        return { pod: deployment.spec.template, account };
      };
      const { pod, account } = await render(`
verification:
  privateHosts: [gitlab.corp]
  cloudCredentials: [ecr, acr]
  registryCA: { configMap: corp-ca, key: ca.pem }
kms:
  endpoints: [localstack.dev:4566]
serviceAccount:
  annotations:
    eks.amazonaws.com/role-arn: arn:aws:iam::123456789012:role/signet
podLabels:
  azure.workload.identity/use: "true"
extraEnv:
  - { name: HTTPS_PROXY, value: "http://proxy.corp:3128" }
  - { name: NO_PROXY, value: ".svc,.cluster.local" }
`);
      const container = pod.spec.containers[0] as Container;
      expect(container.args).toEqual(
        expect.arrayContaining([
          '--private-host=gitlab.corp',
          '--kms-endpoint=localstack.dev:4566',
          '--cloud-credentials=ecr',
          '--cloud-credentials=acr',
          '--registry-ca-file=/etc/signet/registry-ca/ca.pem',
        ]),
      );
      expect(container.env).toEqual(
        expect.arrayContaining([
          { name: 'HTTPS_PROXY', value: 'http://proxy.corp:3128' },
          { name: 'NO_PROXY', value: '.svc,.cluster.local' },
        ]),
      );
      expect(container.volumeMounts).toContainEqual({
        name: 'registry-ca',
        mountPath: '/etc/signet/registry-ca',
        readOnly: true,
      });
      expect(pod.spec.volumes).toContainEqual({
        name: 'registry-ca',
        configMap: { name: 'corp-ca', items: [{ key: 'ca.pem', path: 'ca.pem' }] },
      });
      expect(pod.metadata.labels['azure.workload.identity/use']).toBe('true');
      expect(account.metadata.annotations).toEqual({
        'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/signet',
      });

      const fromSecret = await render('verification:\n  registryCA: { secret: corp-ca }\n');
      expect(fromSecret.pod.spec.volumes).toContainEqual({
        name: 'registry-ca',
        secret: { secretName: 'corp-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] },
      });
      const plain = await render('{}\n');
      const plainArgs = plain.pod.spec.containers[0]?.args ?? [];
      expect(plainArgs.some((arg) => /cloud-credentials|registry-ca-file/.test(arg))).toBe(false);
      expect(plain.account.metadata.annotations).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
