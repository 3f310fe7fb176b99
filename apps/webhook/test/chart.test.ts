import { readdirSync, readFileSync } from 'node:fs';
import { registeredRules } from '@signet/k8s-types';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseGoDuration } from '../src/http/duration.js';
import { webhookConfigurations } from '../src/webhook-configurations.js';

const chart = new URL('../chart/', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, chart), 'utf8');

/** The literal YAML block under `key:` at the given indentation in a template. */
function block(template: string, key: string, indent: number): unknown {
  const lines = template.split('\n');
  const start = lines.indexOf(`${' '.repeat(indent)}${key}:`);
  expect(start, `${key}: not found in the template`).toBeGreaterThanOrEqual(0);
  const body: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() !== '' && line.length - line.trimStart().length <= indent) break;
    body.push(line);
  }
  return parse(body.join('\n').replaceAll('{{ $.Release.Namespace | quote }}', '"RELEASE-NAMESPACE"'));
}

describe('the Helm chart', () => {
  const template = read('templates/webhooks.yaml');
  const generated = webhookConfigurations({
    name: 'signet',
    endpoint: { service: { namespace: 'RELEASE-NAMESPACE', name: 'signet-webhook' } },
    namespace: 'RELEASE-NAMESPACE',
  });
  const hook = (generated[0] as { webhooks: Record<string, unknown>[] }).webhooks[0] as Record<
    string,
    unknown
  >;

  it('registers the same rules as the code generator (never DELETE, status or scale)', () => {
    expect(block(template, 'rules', 4)).toEqual(registeredRules());
    expect(template).not.toMatch(/DELETE|\/status|\/scale|"\*"/);
  });

  it('uses the same namespace selector and safety settings', () => {
    expect(block(template, 'namespaceSelector', 4)).toEqual(hook.namespaceSelector);
    expect(template).toContain('sideEffects: None');
    expect(template).toContain('matchPolicy: Equivalent');
    expect(template).toContain('admissionReviewVersions: ["v1"]');
    expect(parse(read('values.yaml')).webhook).toEqual({
      name: 'signet',
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
      mutating: true,
    });
  });

  it('runs two non-root replicas with a read-only root filesystem, limits and a PodDisruptionBudget', () => {
    const values = parse(read('values.yaml'));
    expect(values.replicaCount).toBe(2);
    expect(values.resources.limits).toBeDefined();
    expect(values.resources.requests).toBeDefined();
    expect(values.podDisruptionBudget.minAvailable).toBe(1);
    const deployment = read('templates/deployment.yaml');
    for (const needle of [
      'runAsNonRoot: true',
      'readOnlyRootFilesystem: true',
      'allowPrivilegeEscalation: false',
      'drop: ["ALL"]',
    ]) {
      expect(deployment).toContain(needle);
    }
    expect(read('templates/pdb.yaml')).toContain('kind: PodDisruptionBudget');
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
    const crds = readdirSync(new URL('crds/', chart)).map((f) => parse(read(`crds/${f}`)));
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
});
