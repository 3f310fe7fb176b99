import { describe, expect, it } from 'vitest';
import { webhookConfigurations } from '../src/webhook-configurations.js';

describe('generated webhook configurations', () => {
  const [validating, mutating] = webhookConfigurations({
    name: 'signet',
    endpoint: { service: { namespace: 'signet-system', name: 'signet-webhook' } },
    caBundle: 'Q0E=',
    namespace: 'signet-system',
  });

  it('register exactly what the admission contract lists', () => {
    expect(validating?.kind).toBe('ValidatingWebhookConfiguration');
    expect(mutating?.kind).toBe('MutatingWebhookConfiguration');
    for (const config of [validating, mutating]) {
      const [hook] = (config as { webhooks: Record<string, unknown>[] }).webhooks;
      expect(hook?.rules).toEqual([
        {
          apiGroups: [''],
          apiVersions: ['v1'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['pods', 'pods/ephemeralcontainers', 'replicationcontrollers'],
          scope: 'Namespaced',
        },
        {
          apiGroups: ['apps'],
          apiVersions: ['v1'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['deployments', 'replicasets', 'statefulsets', 'daemonsets'],
          scope: 'Namespaced',
        },
        {
          apiGroups: ['batch'],
          apiVersions: ['v1'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['jobs', 'cronjobs'],
          scope: 'Namespaced',
        },
      ]);
      const text = JSON.stringify(hook?.rules);
      expect(text).not.toMatch(/DELETE|status|scale|\*/);
      expect(hook).toMatchObject({
        sideEffects: 'None',
        failurePolicy: 'Fail',
        admissionReviewVersions: ['v1'],
        timeoutSeconds: 10,
        namespaceSelector: {
          matchExpressions: [
            { key: 'policy.sigstore.dev/include', operator: 'In', values: ['true'] },
            {
              key: 'kubernetes.io/metadata.name',
              operator: 'NotIn',
              values: ['signet-system', 'kube-system'],
            },
          ],
        },
      });
    }
  });

  it('point at the service paths with the CA bundle', () => {
    const hook = (validating as { webhooks: { clientConfig: unknown }[] }).webhooks[0];
    expect(hook?.clientConfig).toEqual({
      service: { namespace: 'signet-system', name: 'signet-webhook', path: '/validate', port: 443 },
      caBundle: 'Q0E=',
    });
    const mhook = (mutating as { webhooks: { clientConfig: unknown; reinvocationPolicy: string }[] })
      .webhooks[0];
    expect(mhook?.clientConfig).toMatchObject({ service: { path: '/mutate' } });
    expect(mhook?.reinvocationPolicy).toBe('IfNeeded');
  });

  it('supports URL endpoints, Ignore, no mutating webhook, and checks the timeout', () => {
    const configs = webhookConfigurations({
      name: 'dev',
      endpoint: { url: 'https://127.0.0.1:8443/' },
      namespace: 'kube-system',
      failurePolicy: 'Ignore',
      mutating: false,
      timeoutSeconds: 5,
    });
    expect(configs).toHaveLength(1);
    const hook = (configs[0] as { webhooks: Record<string, unknown>[] }).webhooks[0];
    expect(hook).toMatchObject({
      clientConfig: { url: 'https://127.0.0.1:8443/validate' },
      failurePolicy: 'Ignore',
      timeoutSeconds: 5,
    });
    const selector = hook?.namespaceSelector as { matchExpressions: { values: string[] }[] };
    expect(selector.matchExpressions[1]?.values).toEqual(['kube-system']);
    expect(() =>
      webhookConfigurations({
        name: 'x',
        endpoint: { url: 'https://x' },
        namespace: 'n',
        timeoutSeconds: 31,
      }),
    ).toThrow('timeoutSeconds must be an integer from 1 to 30, got 31');
  });
});
