// What `signet migrate check` reads from a live cluster (as the user running it): the
// policy.sigstore.dev CRDs, the Helm release that owns them (its stored manifest says what
// `helm uninstall` would delete), the admission webhooks, the policies and TrustRoots (at the
// storage version when the served one cannot be read), the Secrets and config of both namespaces.
import { gunzipSync } from 'node:zlib';
import { KubeApiError, type KubeClient, statusOf } from '../kube/client.js';

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
}

async function getOrUndefined(client: KubeClient, path: string): Promise<KubeObject | undefined> {
  try {
    return await client.get<KubeObject>(path);
  } catch (error) {
    if (statusOf(error) === 404) return undefined;
    throw error;
  }
}

async function listOrEmpty(client: KubeClient, path: string, query = {}): Promise<KubeObject[]> {
  try {
    return (await client.list<KubeObject>(path, { query })).items;
  } catch (error) {
    if (statusOf(error) === 404) return [];
    throw error;
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
  client: KubeClient,
  name: string,
  namespace: string,
  parseManifest: (text: string) => KubeObject[],
): Promise<HelmRelease | undefined> {
  const secrets = await listOrEmpty(client, `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`, {
    labelSelector: `owner=helm,name=${name}`,
  });
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
  client: KubeClient,
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
      const { items } = await client.list<KubeObject>(
        `/apis/policy.sigstore.dev/${version.name}/clusterimagepolicies`,
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
      last = error;
    }
  }
  return { objects: { error: last instanceof Error ? last.message : String(last) }, version: undefined };
}

/** Reads everything the checks look at. Throws KubeApiError when the cluster cannot be reached. */
export async function readClusterState(
  client: KubeClient,
  options: { signetNamespace: string; fromNamespace: string; signetRelease: string },
  parseManifest: (text: string) => KubeObject[],
): Promise<ClusterState> {
  const crdPath = (name: string) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
  const [cipCrd, trCrd] = await Promise.all(POLICY_CRDS.map((name) => getOrUndefined(client, crdPath(name))));
  const owners = new Map<string, { name: string; namespace: string }>();
  for (const crd of [cipCrd, trCrd]) {
    const annotations = crd?.metadata?.annotations ?? {};
    const name = annotations['meta.helm.sh/release-name'];
    const namespace = annotations['meta.helm.sh/release-namespace'];
    if (name && namespace) owners.set(`${namespace}/${name}`, { name, namespace });
  }
  const releases = (
    await Promise.all(
      [...owners.values()].map((o) => readRelease(client, o.name, o.namespace, parseManifest)),
    )
  ).filter((r): r is HelmRelease => r !== undefined);
  const policies = await readPolicies(client, cipCrd);
  const trustRoots =
    trCrd === undefined
      ? []
      : await listOrEmpty(client, '/apis/policy.sigstore.dev/v1alpha1/trustroots')
          .then((items) =>
            items.map((o) => ({ ...o, apiVersion: 'policy.sigstore.dev/v1alpha1', kind: 'TrustRoot' })),
          )
          .catch((error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }));
  const ns = (namespace: string, what: string) =>
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/${what}`;
  const [validating, mutating, signetSecrets, signetConfigMaps, fromSecrets, fromConfig, fromDeployments] =
    await Promise.all([
      listOrEmpty(client, '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations'),
      listOrEmpty(client, '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations'),
      listOrEmpty(client, ns(options.signetNamespace, 'secrets')),
      listOrEmpty(client, ns(options.signetNamespace, 'configmaps')),
      listOrEmpty(client, ns(options.fromNamespace, 'secrets')),
      getOrUndefined(client, ns(options.fromNamespace, 'configmaps/config-policy-controller')),
      listOrEmpty(
        client,
        `/apis/apps/v1/namespaces/${encodeURIComponent(options.fromNamespace)}/deployments`,
      ),
    ]);
  return {
    ...options,
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

export { KubeApiError };
