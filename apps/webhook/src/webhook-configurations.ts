import { INCLUDE_NAMESPACE_LABEL, registeredRules } from '@signet/k8s-types';

/** How the API server reaches the webhook: an in-cluster Service, or a URL (host process, tests). */
export type WebhookEndpoint =
  | { readonly service: { readonly namespace: string; readonly name: string; readonly port?: number } }
  | { readonly url: string };

export interface WebhookConfigurationOptions {
  /** Name of both configurations and the prefix of their webhooks' names. */
  readonly name: string;
  readonly endpoint: WebhookEndpoint;
  /** base64 PEM CA bundle that signs the serving certificate (may be filled in later). */
  readonly caBundle?: string;
  /** The webhook's own namespace, never intercepted (with kube-system). */
  readonly namespace: string;
  readonly failurePolicy?: 'Fail' | 'Ignore';
  /** API server-side timeout, 1..30 seconds (default 10). */
  readonly timeoutSeconds?: number;
  /** Register the tag-to-digest mutating webhook too (default true). */
  readonly mutating?: boolean;
}

type Json = Record<string, unknown>;

/** Namespaces that are never intercepted, whatever their labels say. */
export function excludedNamespaces(ownNamespace: string): string[] {
  return [...new Set([ownNamespace, 'kube-system'])];
}

function clientConfig(options: WebhookConfigurationOptions, path: '/validate' | '/mutate'): Json {
  const ca = options.caBundle ? { caBundle: options.caBundle } : {};
  if ('url' in options.endpoint) return { url: `${options.endpoint.url.replace(/\/$/, '')}${path}`, ...ca };
  const { namespace, name, port } = options.endpoint.service;
  return { service: { namespace, name, path, port: port ?? 443 }, ...ca };
}

function webhook(options: WebhookConfigurationOptions, path: '/validate' | '/mutate'): Json {
  const timeoutSeconds = options.timeoutSeconds ?? 10;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 30) {
    throw new RangeError(`timeoutSeconds must be an integer from 1 to 30, got ${timeoutSeconds}`);
  }
  return {
    name: `${path === '/validate' ? 'validating' : 'mutating'}.${options.name}.signet.dev`,
    admissionReviewVersions: ['v1'],
    clientConfig: clientConfig(options, path),
    rules: registeredRules(),
    failurePolicy: options.failurePolicy ?? 'Fail',
    matchPolicy: 'Equivalent',
    sideEffects: 'None',
    timeoutSeconds,
    namespaceSelector: {
      matchExpressions: [
        { key: INCLUDE_NAMESPACE_LABEL, operator: 'In', values: ['true'] },
        {
          key: 'kubernetes.io/metadata.name',
          operator: 'NotIn',
          values: excludedNamespaces(options.namespace),
        },
      ],
    },
    ...(path === '/mutate' ? { reinvocationPolicy: 'IfNeeded' } : {}),
  };
}

/**
 * The ValidatingWebhookConfiguration (and MutatingWebhookConfiguration) that register Signet as
 * the admission contract says: CREATE and UPDATE of the covered resources only (never DELETE,
 * `*\/status` or `*\/scale`), opt-in namespaces labelled `policy.sigstore.dev/include=true`, never
 * the webhook's own namespace or kube-system, `sideEffects: None`, failing closed by default.
 */
export function webhookConfigurations(options: WebhookConfigurationOptions): Json[] {
  const labels = { 'app.kubernetes.io/name': 'signet', 'app.kubernetes.io/component': 'admission-webhook' };
  const out: Json[] = [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: options.name, labels },
      webhooks: [webhook(options, '/validate')],
    },
  ];
  if (options.mutating ?? true) {
    out.push({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: options.name, labels },
      webhooks: [webhook(options, '/mutate')],
    });
  }
  return out;
}
