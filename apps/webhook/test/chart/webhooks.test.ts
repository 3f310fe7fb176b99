// The chart's webhook configurations, rendered by the real helm (3 and 4), are what the code
// generator (webhookConfigurations) makes from the same settings: for the defaults and for every
// webhook option, so the two cannot drift.
import { registeredRules } from '@signet/k8s-types';
import { describe, expect, it } from 'vitest';
import { type WebhookConfigurationOptions, webhookConfigurations } from '../../src/webhook-configurations.js';
import { HELM_MAJORS, type HelmMajor, NAMESPACE, only, RELEASE, renderChart } from './render.js';

interface Configuration {
  readonly metadata: { annotations?: Record<string, string> };
  readonly webhooks: Record<string, unknown>[];
}

const generated = (options: Partial<WebhookConfigurationOptions>) =>
  webhookConfigurations({
    name: 'signet',
    endpoint: { service: { namespace: NAMESPACE, name: `${RELEASE}-webhook` } },
    namespace: NAMESPACE,
    ...options,
  }) as unknown as (Configuration & { kind: string })[];

const CASES: readonly [string, object, Partial<WebhookConfigurationOptions>][] = [
  ['the defaults', {}, {}],
  [
    'a namespace selector of its own, an object selector and match conditions',
    {
      webhook: {
        namespaceSelector: {
          matchLabels: { 'signet.dev/enforce': 'true' },
          matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['sandbox'] }],
        },
        objectSelector: { matchExpressions: [{ key: 'signet.dev/skip', operator: 'DoesNotExist' }] },
        matchConditions: [{ name: 'not-nodes', expression: "!request.userInfo.username.startsWith('system:node:')" }],
        mutate: { matchConditions: [{ name: 'not-dry-run', expression: '!request.dryRun' }] },
      },
    },
    {
      namespaceSelector: {
        matchLabels: { 'signet.dev/enforce': 'true' },
        matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['sandbox'] }],
      },
      objectSelector: { matchExpressions: [{ key: 'signet.dev/skip', operator: 'DoesNotExist' }] },
      matchConditions: [{ name: 'not-nodes', expression: "!request.userInfo.username.startsWith('system:node:')" }],
      mutate: { matchConditions: [{ name: 'not-dry-run', expression: '!request.dryRun' }] },
    },
  ],
  [
    'failurePolicy and timeoutSeconds per webhook',
    {
      webhook: {
        failurePolicy: 'Ignore',
        timeoutSeconds: 20,
        validate: { failurePolicy: 'Fail', timeoutSeconds: 15 },
        mutate: { timeoutSeconds: 5 },
        policyValidation: { failurePolicy: 'Fail', timeoutSeconds: 3 },
      },
    },
    {
      failurePolicy: 'Ignore',
      timeoutSeconds: 20,
      validate: { failurePolicy: 'Fail', timeoutSeconds: 15 },
      mutate: { timeoutSeconds: 5 },
      policyValidation: { failurePolicy: 'Fail', timeoutSeconds: 3 },
    },
  ],
  [
    'no mutating webhook and no policy webhook',
    { webhook: { mutating: false, policyValidation: { enabled: false } } },
    { mutating: false, policyValidation: false },
  ],
  [
    'cert-manager injecting the CA',
    { tls: { mode: 'cert-manager' } },
    { annotations: { 'cert-manager.io/inject-ca-from': `${NAMESPACE}/${RELEASE}-webhook-tls` } },
  ],
];

describe.each(HELM_MAJORS)('webhook configurations under %s', (major: HelmMajor) => {
  it.each(CASES)('%s: as the code generator makes them', async (_, values, options) => {
    const objects = await renderChart(major, values);
    const expected = generated(options);
    const rendered = objects.filter((o) => o.kind.endsWith('WebhookConfiguration'));
    expect(rendered.map((o) => o.kind).sort()).toEqual(expected.map((o) => o.kind).sort());
    for (const config of expected) {
      const chart = only<Configuration>(objects, config.kind);
      expect(chart.webhooks, config.kind).toEqual(config.webhooks);
      expect(chart.metadata.annotations, config.kind).toEqual(config.metadata.annotations);
    }
  });

  it('never registers DELETE, status or scale for workloads; the policy webhook only writes of policy objects', async () => {
    const objects = await renderChart(major);
    const validating = only<Configuration>(objects, 'ValidatingWebhookConfiguration');
    const [workloads, policies] = validating.webhooks as { rules: unknown; name: string; failurePolicy: string }[];
    expect(workloads?.rules).toEqual(registeredRules());
    expect(JSON.stringify(workloads?.rules)).not.toMatch(/DELETE|status|scale|\*/);
    expect(policies?.name).toBe('policies.signet.signet.dev');
    expect(policies?.rules).toEqual([
      {
        apiGroups: ['policy.sigstore.dev'],
        apiVersions: ['*'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['clusterimagepolicies', 'trustroots'],
        scope: 'Cluster',
      },
      {
        apiGroups: ['policy.signet.dev'],
        apiVersions: ['*'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['imagepolicies', 'imagepolicyexceptions'],
        scope: 'Namespaced',
      },
    ]);
    // Fails open: an unavailable Signet must not make a policy impossible to fix.
    expect(policies?.failurePolicy).toBe('Ignore');
  });
});
