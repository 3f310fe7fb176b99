// The chart's side of namespaced policies, rendered by the real helm (3 and 4): the CRDs (an
// ImagePolicy's schema is the ClusterImagePolicy's minus what a team may not set), the aggregated
// RBAC that lets a namespace's editors write ImagePolicies, the opt-in exception-writer role, and
// the maximum exception lifetime passed to Signet. The RBAC on a real API server: e2e.
import { readFileSync } from 'node:fs';
import { EXCEPTION_LIMITS } from '@signet/k8s-types';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CHART_DIR, HELM_MAJORS, type HelmMajor, type K8sObject, only, renderChart, renderError } from './render.js';

type Schema = { [key: string]: unknown; properties?: Record<string, Schema>; items?: Schema };

const crd = (file: string) => parse(readFileSync(`${CHART_DIR}/files/crds/${file}`, 'utf8'));
const schemaOf = (file: string, version = 0): Schema =>
  crd(file).spec.versions[version].schema.openAPIV3Schema.properties.spec;

/** The paths at which two schemas differ (a property added, removed or changed). */
function differences(a: unknown, b: unknown, path = ''): string[] {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) || Array.isArray(b))
    return JSON.stringify(a) === JSON.stringify(b) ? [] : [path];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((key) =>
    differences((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}/${key}`),
  );
}

describe('the policy.signet.dev CRDs', () => {
  it("an ImagePolicy's spec is a ClusterImagePolicy's, but for what a team may not set", () => {
    const cluster = schemaOf('clusterimagepolicies.policy.sigstore.dev.yaml', 1);
    const team = schemaOf('imagepolicies.policy.signet.dev.yaml');
    const authority = '/properties/authorities/items/properties';
    const policy = (at: string) => [
      `${at}/properties/configMapRef/properties/namespace/description`,
      `${at}/properties/remote/description`,
      `${at}/properties/type/description`,
      `${at}/x-kubernetes-validations`,
    ];
    const key = (at: string) => [
      `${at}/properties/kms/description`,
      `${at}/properties/secretRef/properties/namespace/description`,
      `${at}/x-kubernetes-validations`,
    ];
    expect(differences(cluster, team).sort()).toEqual(
      [
        '/properties/mode/description',
        '/properties/mode/enum',
        `${authority}/static/properties/action/description`,
        `${authority}/static/properties/action/enum`,
        ...key(`${authority}/key`),
        ...key(`${authority}/keyless/properties/ca-cert`),
        ...policy('/properties/policy'),
        ...policy(`${authority}/attestations/items/properties/policy`),
      ].sort(),
    );
    const props = team.properties as Record<string, Schema>;
    expect(props.mode).toMatchObject({ enum: ['enforce'] });
    const staticAction = (props.authorities?.items?.properties?.static?.properties as Record<string, Schema>).action;
    expect(staticAction).toMatchObject({ enum: ['fail'] });
    expect(props.authorities?.items?.properties?.key?.['x-kubernetes-validations']).toEqual([
      expect.objectContaining({ rule: '!has(self.kms)' }),
    ]);
    expect(props.policy?.['x-kubernetes-validations']).toEqual([expect.objectContaining({ rule: '!has(self.remote)' })]);
  });

  it('both are namespaced, in their own group, with status written by Signet, kept on uninstall', () => {
    for (const file of ['imagepolicies.policy.signet.dev.yaml', 'imagepolicyexceptions.policy.signet.dev.yaml']) {
      const object = crd(file);
      expect(object.spec).toMatchObject({ group: 'policy.signet.dev', scope: 'Namespaced' });
      expect(object.spec.versions.map((v: { name: string; storage: boolean }) => [v.name, v.storage])).toEqual([
        ['v1alpha1', true],
      ]);
      expect(object.spec.versions[0].subresources).toEqual({ status: {} });
      expect(object.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
    }
  });

  it('kubectl get shows whether each works, and an exception whether it applies now', () => {
    const columns = (file: string) =>
      crd(file).spec.versions[0].additionalPrinterColumns.map(
        (c: { name: string; jsonPath: string; priority?: number }) => [c.name, c.jsonPath, c.priority ?? 0],
      );
    const ready = '.status.conditions[?(@.type=="Ready")]';
    expect(columns('imagepolicies.policy.signet.dev.yaml')).toEqual([
      ['Ready', `${ready}.status`, 0],
      ['Reason', `${ready}.reason`, 0],
      ['Age', '.metadata.creationTimestamp', 0],
    ]);
    // State: Active, Expired, TooLong or Invalid, as Signet writes it (policy/namespaced-status.ts).
    expect(columns('imagepolicyexceptions.policy.signet.dev.yaml')).toEqual([
      ['Expires', '.spec.expires', 0],
      ['Ready', `${ready}.status`, 0],
      ['State', `${ready}.reason`, 0],
      ['Why', '.spec.reason', 1],
      ['Age', '.metadata.creationTimestamp', 0],
    ]);
  });

  it("an exception's schema requires what its parser requires, with the same bounds", () => {
    const spec = schemaOf('imagepolicyexceptions.policy.signet.dev.yaml');
    const props = spec.properties as Record<string, Schema>;
    expect(spec.required).toEqual(['images', 'policies', 'reason', 'expires']);
    expect(props.images).toMatchObject({ minItems: 1, maxItems: EXCEPTION_LIMITS.images });
    expect(props.images?.items?.['x-kubernetes-validations']).toEqual([
      { rule: 'has(self.glob) != has(self.digest)', message: 'exactly one of glob or digest is required' },
    ]);
    expect(props.policies).toMatchObject({ minItems: 1, maxItems: EXCEPTION_LIMITS.policies });
    expect(props.policies?.items?.properties?.kind).toMatchObject({ enum: ['ClusterImagePolicy', 'ImagePolicy'] });
    expect(props.reason).toMatchObject({ minLength: 1, maxLength: EXCEPTION_LIMITS.reason });
    expect(props.expires).toMatchObject({ type: 'string', format: 'date-time' });
  });
});

interface Rule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly verbs: string[];
}
interface ClusterRole extends K8sObject {
  readonly rules: Rule[];
}

const rulesFor = (role: ClusterRole, resource: string) =>
  role.rules.filter((r) => r.apiGroups.includes('policy.signet.dev') && r.resources.includes(resource));

describe.each(HELM_MAJORS)('the chart under %s', (major: HelmMajor) => {
  it("lets a namespace's editors and admins write its ImagePolicies, viewers read them; exceptions are no one's by default", async () => {
    const objects = await renderChart(major);
    const edit = only<ClusterRole>(objects, 'ClusterRole', 'signet-webhook-imagepolicy-edit');
    expect(edit.metadata.labels).toMatchObject({
      'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
      'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
    });
    expect(rulesFor(edit, 'imagepolicies').flatMap((r) => r.verbs)).toEqual(
      expect.arrayContaining(['create', 'update', 'patch', 'delete']),
    );
    expect(rulesFor(edit, 'imagepolicyexceptions').flatMap((r) => r.verbs)).toEqual(['get', 'list', 'watch']);
    const view = only<ClusterRole>(objects, 'ClusterRole', 'signet-webhook-imagepolicy-view');
    expect(view.metadata.labels).toMatchObject({ 'rbac.authorization.k8s.io/aggregate-to-view': 'true' });
    expect(view.rules.flatMap((r) => r.verbs)).toEqual(['get', 'list', 'watch']);
    expect(objects.some((o) => o.metadata.name === 'signet-webhook-exception-writer')).toBe(false);
    // Signet itself lists and watches both.
    const own = only<ClusterRole>(objects, 'ClusterRole', 'signet-webhook');
    expect(rulesFor(own, 'imagepolicyexceptions').flatMap((r) => r.verbs)).toEqual(['get', 'list', 'watch']);
    expect(rulesFor(own, 'imagepolicies').flatMap((r) => r.verbs)).toEqual(['get', 'list', 'watch']);
    // ...writes their status, and reads the Secrets and ConfigMaps they name by name, never a list.
    for (const status of ['imagepolicies/status', 'imagepolicyexceptions/status'])
      expect(rulesFor(own, status).flatMap((r) => r.verbs)).toEqual(['update']);
    const readable = own.rules.filter(
      (r) => r.apiGroups.includes('') && (r.resources.includes('secrets') || r.resources.includes('configmaps')),
    );
    expect(readable.flatMap((r) => r.resources)).toEqual(expect.arrayContaining(['secrets', 'configmaps']));
    expect([...new Set(readable.flatMap((r) => r.verbs))]).toEqual(['get']);
    // ...with the maximum exception lifetime it enforces.
    const deployment = only<{ spec: { template: { spec: { containers: { args: string[] }[] } } } }>(
      objects,
      'Deployment',
    );
    expect(deployment.spec.template.spec.containers[0]?.args).toContain('--exception-max-lifetime=720h');
  });

  it('renders the exception-writer role only when asked, aggregated into no built-in role', async () => {
    const objects = await renderChart(major, {
      namespacedPolicies: { aggregateToEdit: false, exceptions: { writerRole: true, maxLifetime: '168h' } },
    });
    const writer = only<ClusterRole>(objects, 'ClusterRole', 'signet-webhook-exception-writer');
    expect(Object.keys(writer.metadata.labels ?? {}).filter((l) => l.startsWith('rbac.authorization.k8s.io'))).toEqual(
      [],
    );
    expect(writer.rules).toEqual([
      {
        apiGroups: ['policy.signet.dev'],
        resources: ['imagepolicyexceptions'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'],
      },
    ]);
    expect(objects.some((o) => o.metadata.name === 'signet-webhook-imagepolicy-edit')).toBe(false);
    const deployment = only<{ spec: { template: { spec: { containers: { args: string[] }[] } } } }>(
      objects,
      'Deployment',
    );
    expect(deployment.spec.template.spec.containers[0]?.args).toContain('--exception-max-lifetime=168h');
  });

  it('refuses a maximum lifetime that is not a duration, and unknown keys', async () => {
    expect(await renderError(major, { namespacedPolicies: { exceptions: { maxLifetime: '30d' } } })).toContain(
      '/namespacedPolicies/exceptions/maxLifetime',
    );
    expect(await renderError(major, { namespacedPolicies: { writerRole: true } })).toContain('writerRole');
  });
});
