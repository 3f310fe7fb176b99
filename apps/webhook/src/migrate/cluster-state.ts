// What `signet migrate check` reads from a live cluster (as the user running it): the
// policy.sigstore.dev CRDs, the Helm release that owns them (its stored manifest says what
// `helm uninstall` would delete), the admission webhooks, the policies and TrustRoots (at the
// storage version when the served one cannot be read), the Secrets and config of both namespaces.
import { gunzipSync } from 'node:zlib';
import type { KubeApi } from '../kube/kube-api.js';
import { KubeApiError, kubeApiError, statusOf } from '../kube/kube-errors.js';
import { apiJson, type ListPage, listAll, PAGE_SIZE } from '../kube/lists.js';

export type KubeObject = Record<string, unknown> & {
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
  };
};

export const POLICY_CRDS = [
  'clusterimagepolicies.policy.sigstore.dev',
  'trustroots.policy.sigstore.dev',
] as const;

/** Signet's own kinds (policy.signet.dev), which policy-controller does not have. */
export const SIGNET_KINDS = [
  { kind: 'ImagePolicy', plural: 'imagepolicies' },
  { kind: 'ImagePolicyException', plural: 'imagepolicyexceptions' },
] as const;

export type SignetKind = (typeof SIGNET_KINDS)[number]['kind'];

/** A Helm release as its newest stored record says (Secret `sh.helm.release.v1.NAME.vN`). */
export interface HelmRelease {
  readonly name: string;
  readonly namespace: string;
  readonly version: number;
  readonly status: string;
  /** The chart it was installed from, when the record says. */
  readonly chart?: { readonly name: string; readonly version: string };
  /** The objects of its manifest (what `helm uninstall` deletes, unless kept). */
  readonly manifestObjects: readonly KubeObject[];
}

/** A list that could not be read, and why (a dead conversion webhook, RBAC). */
export interface Unreadable {
  readonly error: string;
}

export interface ClusterState {
  readonly signetNamespace: string;
  readonly fromNamespace: string;
  readonly signetRelease: string;
  /** By name; `undefined` when absent. */
  readonly crds: Readonly<Record<string, KubeObject | undefined>>;
  /** The releases that own the CRDs (by the CRDs' meta.helm.sh annotations). */
  readonly releases: readonly HelmRelease[];
  readonly validatingWebhooks: readonly KubeObject[];
  readonly mutatingWebhooks: readonly KubeObject[];
  /** Read at the served version (v1beta1), else at the storage version; or why neither could be. */
  readonly policies: readonly KubeObject[] | Unreadable;
  /** The version the policies were read at. */
  readonly policyVersion: string | undefined;
  readonly trustRoots: readonly KubeObject[] | Unreadable;
  /** Secrets and ConfigMaps of Signet's namespace (what Signet compiles against). */
  readonly signetSecrets: readonly KubeObject[];
  readonly signetConfigMaps: readonly KubeObject[];
  /** Names of the Secrets in policy-controller's namespace. */
  readonly fromSecrets: readonly string[];
  readonly fromConfig: KubeObject | undefined;
  readonly fromDeployments: readonly KubeObject[];
  /**
   * Signet's own namespaced objects, by kind: `undefined` when their CRD is not installed (an
   * older state without them reads the same).
   */
  readonly signetObjects?: Readonly<Partial<Record<SignetKind, readonly KubeObject[] | Unreadable>>>;
}

/** Every call of the check has this deadline. */
const CALL_TIMEOUT_MS = 30_000;

/** One page of a list call. */
type PageCall = (page: { limit: number; _continue?: string }) => Promise<ListPage<unknown>>;

/** The object at `path`, read with `read`, as the API's JSON; `undefined` when there is none (404). */
async function getOrUndefined(path: string, read: () => Promise<unknown>): Promise<KubeObject | undefined> {
  try {
    return apiJson<KubeObject>(await read());
  } catch (error) {
    if (statusOf(error) === 404) return undefined;
    throw kubeApiError(`GET ${path}`, error);
  }
}

/** Every object of the list at `path`, as the API's JSON; none when it is not served (404). */
async function listOrEmpty(path: string, list: PageCall): Promise<KubeObject[]> {
  try {
    const { items } = await listAll((token) =>
      list({ limit: PAGE_SIZE, ...(token ? { _continue: token } : {}) }),
    );
    return items.map((item) => apiJson<KubeObject>(item));
  } catch (error) {
    if (statusOf(error) === 404) return [];
    throw kubeApiError(`GET ${path}`, error);
  }
}

/** Helm's release record: base64 (the Secret's) of base64 of gzipped JSON. */
export function decodeHelmRelease(data: string): {
  name?: string;
  namespace?: string;
  version?: number;
  info?: { status?: string };
  chart?: { metadata?: { name?: string; version?: string } };
  manifest?: string;
} {
  const inner = Buffer.from(Buffer.from(data, 'base64').toString('utf8'), 'base64');
  const json =
    inner[0] === 0x1f && inner[1] === 0x8b ? gunzipSync(inner, { maxOutputLength: 64 << 20 }) : inner;
  return JSON.parse(json.toString('utf8'));
}

async function readRelease(
  api: KubeApi,
  name: string,
  namespace: string,
  parseManifest: (text: string) => KubeObject[],
): Promise<HelmRelease | undefined> {
  const secrets = await listOrEmpty(`/api/v1/namespaces/${namespace}/secrets`, (page) =>
    api.core.listNamespacedSecret(
      { namespace, labelSelector: `owner=helm,name=${name}`, ...page },
      api.deadline(CALL_TIMEOUT_MS),
    ),
  );
  const newest = secrets
    .map((s) => ({ secret: s, version: Number(s.metadata?.labels?.version ?? 0) }))
    .sort((a, b) => b.version - a.version)[0];
  const data = (newest?.secret.data as { release?: string } | undefined)?.release;
  if (newest === undefined || data === undefined) return undefined;
  const record = decodeHelmRelease(data);
  return {
    name,
    namespace,
    version: record.version ?? newest.version,
    status: record.info?.status ?? 'unknown',
    ...(record.chart?.metadata?.name && record.chart.metadata.version
      ? { chart: { name: record.chart.metadata.name, version: record.chart.metadata.version } }
      : {}),
    manifestObjects: parseManifest(record.manifest ?? ''),
  };
}

async function readPolicies(
  api: KubeApi,
  crd: KubeObject | undefined,
): Promise<{ objects: KubeObject[] | Unreadable; version: string | undefined }> {
  if (crd === undefined) return { objects: [], version: undefined };
  const versions = (
    (crd.spec as { versions?: { name: string; served?: boolean; storage?: boolean }[] })?.versions ?? []
  )
    .filter((v) => v.served !== false)
    .sort((a, b) => Number(b.name === 'v1beta1') - Number(a.name === 'v1beta1'));
  // The storage version last: readable without conversion (when every object is stored in it).
  const storage = versions.find((v) => v.storage);
  const order = [...versions.filter((v) => v !== storage), ...(storage ? [storage] : [])];
  let last: unknown;
  for (const version of order) {
    try {
      const resource = {
        group: 'policy.sigstore.dev',
        version: version.name,
        plural: 'clusterimagepolicies',
      };
      const { items } = await listAll(
        (token) =>
          api.customObjects.listClusterCustomObject(
            { ...resource, limit: PAGE_SIZE, ...(token ? { _continue: token } : {}) },
            api.deadline(CALL_TIMEOUT_MS),
          ) as Promise<ListPage<KubeObject>>,
      );
      return {
        objects: items.map((o) => ({
          ...o,
          apiVersion: `policy.sigstore.dev/${version.name}`,
          kind: 'ClusterImagePolicy',
        })),
        version: version.name,
      };
    } catch (error) {
      last = kubeApiError(`GET /apis/policy.sigstore.dev/${version.name}/clusterimagepolicies`, error);
    }
  }
  return { objects: { error: last instanceof Error ? last.message : String(last) }, version: undefined };
}

/** Reads everything the checks look at. Throws KubeApiError when the cluster cannot be reached. */
export async function readClusterState(
  api: KubeApi,
  options: { signetNamespace: string; fromNamespace: string; signetRelease: string },
  parseManifest: (text: string) => KubeObject[],
): Promise<ClusterState> {
  const [cipCrd, trCrd] = await Promise.all(
    POLICY_CRDS.map((name) =>
      getOrUndefined(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`, () =>
        api.apiExtensions.readCustomResourceDefinition({ name }, api.deadline(CALL_TIMEOUT_MS)),
      ),
    ),
  );
  const owners = new Map<string, { name: string; namespace: string }>();
  for (const crd of [cipCrd, trCrd]) {
    const annotations = crd?.metadata?.annotations ?? {};
    const name = annotations['meta.helm.sh/release-name'];
    const namespace = annotations['meta.helm.sh/release-namespace'];
    if (name && namespace) owners.set(`${namespace}/${name}`, { name, namespace });
  }
  const releases = (
    await Promise.all([...owners.values()].map((o) => readRelease(api, o.name, o.namespace, parseManifest)))
  ).filter((r): r is HelmRelease => r !== undefined);
  const policies = await readPolicies(api, cipCrd);
  const trustRootResource = { group: 'policy.sigstore.dev', version: 'v1alpha1', plural: 'trustroots' };
  const trustRoots =
    trCrd === undefined
      ? []
      : await listOrEmpty(
          '/apis/policy.sigstore.dev/v1alpha1/trustroots',
          (page) =>
            api.customObjects.listClusterCustomObject(
              { ...trustRootResource, ...page },
              api.deadline(CALL_TIMEOUT_MS),
            ) as Promise<ListPage<unknown>>,
        )
          .then((items) =>
            items.map((o) => ({ ...o, apiVersion: 'policy.sigstore.dev/v1alpha1', kind: 'TrustRoot' })),
          )
          .catch((error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }));
  const { signetNamespace, fromNamespace } = options;
  const admission = api.admissionRegistration;
  const [validating, mutating, signetSecrets, signetConfigMaps, fromSecrets, fromConfig, fromDeployments] =
    await Promise.all([
      listOrEmpty('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', (page) =>
        admission.listValidatingWebhookConfiguration(page, api.deadline(CALL_TIMEOUT_MS)),
      ),
      listOrEmpty('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', (page) =>
        admission.listMutatingWebhookConfiguration(page, api.deadline(CALL_TIMEOUT_MS)),
      ),
      listOrEmpty(`/api/v1/namespaces/${signetNamespace}/secrets`, (page) =>
        api.core.listNamespacedSecret({ namespace: signetNamespace, ...page }, api.deadline(CALL_TIMEOUT_MS)),
      ),
      listOrEmpty(`/api/v1/namespaces/${signetNamespace}/configmaps`, (page) =>
        api.core.listNamespacedConfigMap(
          { namespace: signetNamespace, ...page },
          api.deadline(CALL_TIMEOUT_MS),
        ),
      ),
      listOrEmpty(`/api/v1/namespaces/${fromNamespace}/secrets`, (page) =>
        api.core.listNamespacedSecret({ namespace: fromNamespace, ...page }, api.deadline(CALL_TIMEOUT_MS)),
      ),
      getOrUndefined(`/api/v1/namespaces/${fromNamespace}/configmaps/config-policy-controller`, () =>
        api.core.readNamespacedConfigMap(
          { name: 'config-policy-controller', namespace: fromNamespace },
          api.deadline(CALL_TIMEOUT_MS),
        ),
      ),
      listOrEmpty(`/apis/apps/v1/namespaces/${fromNamespace}/deployments`, (page) =>
        api.apps.listNamespacedDeployment(
          { namespace: fromNamespace, ...page },
          api.deadline(CALL_TIMEOUT_MS),
        ),
      ),
    ]);
  const signetObjects = await readSignetObjects(api);
  return {
    ...options,
    signetObjects,
    crds: { [POLICY_CRDS[0]]: cipCrd, [POLICY_CRDS[1]]: trCrd },
    releases,
    validatingWebhooks: validating,
    mutatingWebhooks: mutating,
    policies: policies.objects,
    policyVersion: policies.version,
    trustRoots,
    signetSecrets: signetSecrets.map((s) => ({ ...s, kind: 'Secret', apiVersion: 'v1' })),
    signetConfigMaps: signetConfigMaps.map((c) => ({ ...c, kind: 'ConfigMap', apiVersion: 'v1' })),
    fromSecrets: fromSecrets
      .map((s) => s.metadata?.name ?? '')
      .filter((n) => n !== '' && !n.startsWith('sh.helm.release.')),
    fromConfig,
    fromDeployments,
  };
}

/** Every ImagePolicy and ImagePolicyException, where their CRDs are installed. */
async function readSignetObjects(api: KubeApi): Promise<NonNullable<ClusterState['signetObjects']>> {
  const entries = await Promise.all(
    SIGNET_KINDS.map(async ({ kind, plural }) => {
      const crd = `${plural}.policy.signet.dev`;
      const installed = await getOrUndefined(
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`,
        () => api.apiExtensions.readCustomResourceDefinition({ name: crd }, api.deadline(CALL_TIMEOUT_MS)),
      );
      if (installed === undefined) return [];
      const resource = { group: 'policy.signet.dev', version: 'v1alpha1', plural };
      const objects = await listOrEmpty(
        `/apis/policy.signet.dev/v1alpha1/${plural}`,
        (page) =>
          api.customObjects.listClusterCustomObject(
            { ...resource, ...page },
            api.deadline(CALL_TIMEOUT_MS),
          ) as Promise<ListPage<unknown>>,
      ).catch((error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }));
      return [[kind, objects] as const];
    }),
  );
  return Object.fromEntries(entries.flat());
}

export { KubeApiError };
