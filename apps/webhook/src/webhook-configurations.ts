import {
  INCLUDE_NAMESPACE_LABEL,
  POLICY_GROUP,
  registeredRules,
  SIGNET_POLICY_GROUP,
} from '@signet/k8s-types';

/** How the API server reaches the webhook: an in-cluster Service, or a URL (host process, tests). */
export type WebhookEndpoint =
  | { readonly service: { readonly namespace: string; readonly name: string; readonly port?: number } }
  | { readonly url: string };

/** A Kubernetes label selector (`matchLabels`, `matchExpressions`). */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly {
    readonly key: string;
    readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    readonly values?: readonly string[];
  }[];
}

/** A CEL condition the API server evaluates before calling the webhook (admissionregistration/v1). */
export interface MatchCondition {
  readonly name: string;
  readonly expression: string;
}

/** What may differ between Signet's webhooks. */
export interface WebhookSettings {
  readonly failurePolicy?: 'Fail' | 'Ignore';
  /** API server-side timeout, 1..30 seconds. */
  readonly timeoutSeconds?: number;
  /** Added to the shared `matchConditions`. */
  readonly matchConditions?: readonly MatchCondition[];
}

export interface WebhookConfigurationOptions {
  /** Name of both configurations and the prefix of their webhooks' names. */
  readonly name: string;
  readonly endpoint: WebhookEndpoint;
  /** base64 PEM CA bundle that signs the serving certificate (may be filled in later). */
  readonly caBundle?: string;
  /** The webhook's own namespace, never intercepted (with kube-system). */
  readonly namespace: string;
  /** Default of the workload webhooks (default `Fail`). */
  readonly failurePolicy?: 'Fail' | 'Ignore';
  /** Default of the workload webhooks, 1..30 seconds (default 10). */
  readonly timeoutSeconds?: number;
  /** Register the tag-to-digest mutating webhook too (default true). */
  readonly mutating?: boolean;
  /**
   * The namespaces whose workloads are intercepted (default: labelled
   * `policy.sigstore.dev/include=true`). The webhook's own namespace and kube-system are excluded
   * whatever it says.
   */
  readonly namespaceSelector?: LabelSelector;
  /** Which workloads are intercepted by their own labels (default all). */
  readonly objectSelector?: LabelSelector;
  /** Conditions of both workload webhooks. */
  readonly matchConditions?: readonly MatchCondition[];
  /** The validating webhook's own settings, over the defaults above. */
  readonly validate?: WebhookSettings;
  /** The mutating webhook's own settings, over the defaults above. */
  readonly mutate?: WebhookSettings;
  /**
   * The webhook that refuses ClusterImagePolicies and TrustRoots that cannot compile, ImagePolicies
   * that would loosen the cluster and exceptions beyond the maximum lifetime (CREATE and UPDATE
   * only: deleting a policy is never refused). Default: registered, failing open (`Ignore`,
   * 10 s), so that an unavailable Signet never makes a policy impossible to fix. `false`: none.
   */
  readonly policyValidation?: false | WebhookSettings;
  /** Annotations of both configurations (cert-manager's `cert-manager.io/inject-ca-from`). */
  readonly annotations?: Readonly<Record<string, string>>;
}

type Json = Record<string, unknown>;
type Path = '/validate' | '/mutate' | '/validate-policy';

/** Namespaces that are never intercepted, whatever their labels say. */
export function excludedNamespaces(ownNamespace: string): string[] {
  return [...new Set([ownNamespace, 'kube-system'])];
}

/** The workload webhooks' namespace selector: the user's (or the opt-in label) and the exclusions. */
export function workloadNamespaceSelector(ownNamespace: string, selector: LabelSelector = {}): Json {
  const custom =
    (selector.matchLabels && Object.keys(selector.matchLabels).length > 0) ||
    (selector.matchExpressions && selector.matchExpressions.length > 0);
  const chosen: LabelSelector = custom
    ? selector
    : { matchExpressions: [{ key: INCLUDE_NAMESPACE_LABEL, operator: 'In', values: ['true'] }] };
  return {
    ...(chosen.matchLabels && Object.keys(chosen.matchLabels).length > 0
      ? { matchLabels: { ...chosen.matchLabels } }
      : {}),
    matchExpressions: [
      ...(chosen.matchExpressions ?? []),
      { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: excludedNamespaces(ownNamespace) },
    ],
  };
}

/**
 * The rules of the policy webhook: writes of the policy objects Signet reads (the cluster's, and
 * the namespaces' ImagePolicies and ImagePolicyExceptions), never DELETE or status.
 */
export function policyRules(): Json[] {
  return [
    {
      apiGroups: [POLICY_GROUP],
      apiVersions: ['*'],
      operations: ['CREATE', 'UPDATE'],
      resources: ['clusterimagepolicies', 'trustroots'],
      scope: 'Cluster',
    },
    {
      apiGroups: [SIGNET_POLICY_GROUP],
      apiVersions: ['*'],
      operations: ['CREATE', 'UPDATE'],
      resources: ['imagepolicies', 'imagepolicyexceptions'],
      scope: 'Namespaced',
    },
  ];
}

function clientConfig(options: WebhookConfigurationOptions, path: Path): Json {
  const ca = options.caBundle ? { caBundle: options.caBundle } : {};
  if ('url' in options.endpoint) return { url: `${options.endpoint.url.replace(/\/$/, '')}${path}`, ...ca };
  const { namespace, name, port } = options.endpoint.service;
  return { service: { namespace, name, path, port: port ?? 443 }, ...ca };
}

function checkedTimeout(timeoutSeconds: number): number {
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 30) {
    throw new RangeError(`timeoutSeconds must be an integer from 1 to 30, got ${timeoutSeconds}`);
  }
  return timeoutSeconds;
}

function conditions(list: readonly MatchCondition[]): Json {
  return list.length > 0
    ? { matchConditions: list.map((c) => ({ name: c.name, expression: c.expression })) }
    : {};
}

function workloadWebhook(options: WebhookConfigurationOptions, path: '/validate' | '/mutate'): Json {
  const own = (path === '/validate' ? options.validate : options.mutate) ?? {};
  const objectSelector = options.objectSelector ?? {};
  return {
    name: `${path === '/validate' ? 'validating' : 'mutating'}.${options.name}.signet.dev`,
    admissionReviewVersions: ['v1'],
    clientConfig: clientConfig(options, path),
    rules: registeredRules(),
    failurePolicy: own.failurePolicy ?? options.failurePolicy ?? 'Fail',
    matchPolicy: 'Equivalent',
    sideEffects: 'None',
    timeoutSeconds: checkedTimeout(own.timeoutSeconds ?? options.timeoutSeconds ?? 10),
    namespaceSelector: workloadNamespaceSelector(options.namespace, options.namespaceSelector),
    ...(Object.keys(objectSelector).length > 0 ? { objectSelector } : {}),
    ...conditions([...(options.matchConditions ?? []), ...(own.matchConditions ?? [])]),
    ...(path === '/mutate' ? { reinvocationPolicy: 'IfNeeded' } : {}),
  };
}

function policyWebhook(options: WebhookConfigurationOptions, settings: WebhookSettings): Json {
  return {
    name: `policies.${options.name}.signet.dev`,
    admissionReviewVersions: ['v1'],
    clientConfig: clientConfig(options, '/validate-policy'),
    rules: policyRules(),
    // Fail open: enforcement never depends on this webhook (a policy that cannot compile denies
    // what it matches), and a Signet that cannot answer must not make policies impossible to fix.
    failurePolicy: settings.failurePolicy ?? 'Ignore',
    matchPolicy: 'Equivalent',
    sideEffects: 'None',
    timeoutSeconds: checkedTimeout(settings.timeoutSeconds ?? 10),
    ...conditions(settings.matchConditions ?? []),
  };
}

/**
 * The ValidatingWebhookConfiguration (and MutatingWebhookConfiguration) that register Signet as
 * the admission contract says: CREATE and UPDATE of the covered resources only (never DELETE,
 * `*\/status` or `*\/scale`), opt-in namespaces labelled `policy.sigstore.dev/include=true`, never
 * the webhook's own namespace or kube-system, `sideEffects: None`, failing closed by default; and
 * the policy webhook (CREATE and UPDATE of ClusterImagePolicies, TrustRoots, ImagePolicies and
 * ImagePolicyExceptions, failing open).
 */
export function webhookConfigurations(options: WebhookConfigurationOptions): Json[] {
  const labels = { 'app.kubernetes.io/name': 'signet', 'app.kubernetes.io/component': 'admission-webhook' };
  const metadata = {
    name: options.name,
    labels,
    ...(options.annotations && Object.keys(options.annotations).length > 0
      ? { annotations: { ...options.annotations } }
      : {}),
  };
  const validating = [workloadWebhook(options, '/validate')];
  if (options.policyValidation !== false)
    validating.push(policyWebhook(options, options.policyValidation ?? {}));
  const out: Json[] = [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata,
      webhooks: validating,
    },
  ];
  if (options.mutating ?? true) {
    out.push({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata,
      webhooks: [workloadWebhook(options, '/mutate')],
    });
  }
  return out;
}
