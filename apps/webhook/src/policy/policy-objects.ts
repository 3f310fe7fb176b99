import {
  type ClusterImagePolicy,
  FieldError,
  type ImagePolicy,
  type ImagePolicyException,
  isObject,
  POLICY_CONTROLLER_CONFIG_NAME,
  type PolicyControllerConfig,
  type PolicyMode,
  parseClusterImagePolicy,
  parseImagePolicy,
  parseImagePolicyException,
  parsePolicyControllerConfig,
  parseTrustRoot,
  SIGNET_POLICY_GROUP,
  type TrustRoot,
} from '@signet/k8s-types';

/** A ConfigMap's data: what `policy.configMapRef` reads a CUE, Rego or CEL policy from. */
export interface ConfigMapData {
  readonly namespace: string;
  readonly name: string;
  readonly data: Readonly<Record<string, string>>;
}

/** A Secret's data, decoded: what `secretRef` keys and pull secrets are read from. */
export interface SecretData {
  readonly namespace: string;
  readonly name: string;
  readonly type: string | undefined;
  readonly data: Readonly<Record<string, Uint8Array>>;
}

/**
 * A ClusterImagePolicy (or a namespace's ImagePolicy) that does not parse. It is never dropped:
 * what it may have matched (the globs that can be read, or every image when one cannot; in its
 * namespace, for an ImagePolicy) is denied in its mode until it is fixed.
 */
export interface UnreadablePolicy {
  readonly kind: 'ClusterImagePolicy' | 'ImagePolicy';
  readonly name: string;
  /** An ImagePolicy's namespace. */
  readonly namespace?: string;
  readonly apiVersion: string | undefined;
  /** The globs it names, when all of them are strings; `undefined` means it may match anything. */
  readonly globs: readonly string[] | undefined;
  /** `warn` only when the object says so unmistakably; otherwise `enforce`. */
  readonly mode: PolicyMode;
  readonly reason: string;
  /** `metadata.generation`, when it is a number. */
  readonly generation: number | undefined;
}

/** Everything a policy source (a YAML file, or watches on a cluster) provides. */
export interface PolicyObjects {
  readonly policies: readonly ClusterImagePolicy[];
  /** Namespaces' ImagePolicies (policy.signet.dev). */
  readonly imagePolicies: readonly ImagePolicy[];
  /** Namespaces' ImagePolicyExceptions; one that does not parse applies to nothing. */
  readonly exceptions: readonly ImagePolicyException[];
  /** Policies that could not be parsed: they deny what they may have matched. */
  readonly unreadable: readonly UnreadablePolicy[];
  readonly trustRoots: readonly TrustRoot[];
  readonly config: PolicyControllerConfig;
  readonly secrets: readonly SecretData[];
  /** The ConfigMaps `configMapRef` policies may read (the webhook's namespace; an ImagePolicy's own). */
  readonly configMaps: readonly ConfigMapData[];
  /** Objects that could not be used, with the reason; the others still apply. */
  readonly problems: readonly PolicyProblem[];
}

/** Which object a problem is about, as the API server names it (for Events and status). */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  /** Set for a namespaced object. */
  readonly namespace?: string;
}

export interface PolicyProblem {
  /** `ClusterImagePolicy/name`, or `document 3` when the object has no readable name: for logs. */
  readonly object: string;
  /** The object, when it has a readable kind, apiVersion and name. */
  readonly ref?: ObjectRef;
  readonly message: string;
  readonly cause?: unknown;
  /** Where the object came from (a file), when not from a cluster. */
  readonly source?: string;
  /** The object's `metadata.generation`, when it has one (for status). */
  readonly generation?: number;
}

/** A ConfigMap's string data; binary data and other fields are not policy sources. */
export function configMapFromObject(
  object: Record<string, unknown>,
  fallbackNamespace: string,
): ConfigMapData {
  const metadata = isObject(object.metadata) ? object.metadata : {};
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  if (name === '')
    throw new FieldError('INVALID_OBJECT', 'metadata.name', 'required string (in a ConfigMap)');
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : fallbackNamespace;
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(isObject(object.data) ? object.data : {})) {
    if (typeof value !== 'string') {
      throw new FieldError(
        'INVALID_OBJECT',
        `data.${key}`,
        `must be a string (in ConfigMap/${namespace}/${name})`,
      );
    }
    data[key] = value;
  }
  return { namespace, name, data };
}

/** Decodes a Secret object (base64 `data`, plain `stringData`). */
export function secretFromObject(object: Record<string, unknown>, fallbackNamespace: string): SecretData {
  const metadata = isObject(object.metadata) ? object.metadata : {};
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  if (name === '') throw new FieldError('INVALID_OBJECT', 'metadata.name', 'required string (in a Secret)');
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : fallbackNamespace;
  const data: Record<string, Uint8Array> = {};
  const label = `Secret/${namespace}/${name}`;
  for (const [key, value] of Object.entries(isObject(object.data) ? object.data : {})) {
    if (typeof value !== 'string')
      throw new FieldError('INVALID_OBJECT', `data.${key}`, `must be a base64 string (in ${label})`);
    data[key] = Buffer.from(value, 'base64');
  }
  for (const [key, value] of Object.entries(isObject(object.stringData) ? object.stringData : {})) {
    if (typeof value !== 'string')
      throw new FieldError('INVALID_OBJECT', `stringData.${key}`, `must be a string (in ${label})`);
    data[key] = Buffer.from(value, 'utf8');
  }
  return { namespace, name, type: typeof object.type === 'string' ? object.type : undefined, data };
}

function refOf(object: unknown): ObjectRef | undefined {
  if (!isObject(object) || !isObject(object.metadata)) return undefined;
  const { kind, apiVersion } = object;
  const { name, namespace } = object.metadata;
  if (typeof kind !== 'string' || typeof apiVersion !== 'string' || typeof name !== 'string')
    return undefined;
  return {
    apiVersion,
    kind,
    name,
    ...(isSignetObject(object) && typeof namespace === 'string' ? { namespace } : {}),
  };
}

/** A `policy.signet.dev` object (other projects have kinds named ImagePolicy too, e.g. Flux). */
function isSignetObject(object: Record<string, unknown>): boolean {
  return typeof object.apiVersion === 'string' && object.apiVersion.startsWith(`${SIGNET_POLICY_GROUP}/`);
}

function generationOf(object: unknown): number | undefined {
  if (!isObject(object) || !isObject(object.metadata)) return undefined;
  const generation = object.metadata.generation;
  return typeof generation === 'number' && Number.isInteger(generation) ? generation : undefined;
}

function labelOf(object: unknown, index: number): string {
  if (isObject(object) && typeof object.kind === 'string' && isObject(object.metadata)) {
    const { name, namespace } = object.metadata;
    if (typeof name === 'string' && typeof namespace === 'string' && isSignetObject(object))
      return `${object.kind}/${namespace}/${name}`;
    if (typeof name === 'string') return `${object.kind}/${name}`;
  }
  return `document ${index + 1}`;
}

/** A problem with `object` (the `index`th of its source). */
export function problemWith(object: unknown, index: number, error: unknown): PolicyProblem {
  const ref = refOf(object);
  const generation = generationOf(object);
  return {
    object: labelOf(object, index),
    ...(ref ? { ref } : {}),
    ...(generation === undefined ? {} : { generation }),
    message: error instanceof Error ? error.message : String(error),
    cause: error,
  };
}

/**
 * Sorts a list of Kubernetes objects into what Signet uses: ClusterImagePolicies (v1beta1 and
 * v1alpha1), TrustRoots, ImagePolicies and ImagePolicyExceptions (policy.signet.dev), the
 * `config-policy-controller` ConfigMap and Secrets. A bad object is reported in `problems` with its
 * name and field path, and the rest still apply. Other kinds are ignored. The config is read before
 * the policies, since `fail-on-empty-authorities` applies. `namespace` is that of objects that
 * name none.
 */
export function collectPolicyObjects(objects: readonly unknown[], namespace: string): PolicyObjects {
  const problems: PolicyProblem[] = [];
  const report = (object: unknown, index: number, error: unknown) => {
    problems.push(problemWith(object, index, error));
  };
  let config = parsePolicyControllerConfig(undefined);
  objects.forEach((object, index) => {
    if (!isObject(object) || object.kind !== 'ConfigMap') return;
    const metadata = isObject(object.metadata) ? object.metadata : {};
    if (metadata.name !== POLICY_CONTROLLER_CONFIG_NAME) return;
    try {
      config = parsePolicyControllerConfig(object.data);
    } catch (error) {
      report(object, index, error);
    }
  });
  const sorted: Sorted = {
    policies: [],
    imagePolicies: [],
    exceptions: [],
    unreadable: [],
    trustRoots: [],
    secrets: [],
    configMaps: [],
  };
  objects.forEach((object, index) => {
    if (object === null || object === undefined) return;
    try {
      if (!isObject(object)) throw new FieldError('INVALID_OBJECT', '', 'must be a Kubernetes object');
      sortObject(object, sorted, config, namespace);
    } catch (error) {
      report(object, index, error);
      const policy = isObject(object) ? unreadableOf(object, index, error, namespace) : undefined;
      if (policy) sorted.unreadable.push(policy);
    }
  });
  const { policies, imagePolicies, exceptions, unreadable, trustRoots, secrets, configMaps } = sorted;
  return {
    policies,
    imagePolicies,
    exceptions,
    unreadable,
    trustRoots,
    config,
    secrets,
    configMaps,
    problems,
  };
}

type Sorted = {
  -readonly [K in Exclude<
    keyof PolicyObjects,
    'config' | 'problems'
  >]: PolicyObjects[K] extends readonly (infer T)[] ? T[] : never;
};

/** Parses `object` into its list in `sorted`; throws what the parser throws. Other kinds are ignored. */
function sortObject(
  object: Record<string, unknown>,
  sorted: Sorted,
  config: PolicyControllerConfig,
  namespace: string,
): void {
  const { failOnEmptyAuthorities } = config;
  switch (object.kind) {
    case 'ClusterImagePolicy':
      sorted.policies.push(parseClusterImagePolicy(object, { failOnEmptyAuthorities }));
      break;
    case 'TrustRoot':
      sorted.trustRoots.push(parseTrustRoot(object));
      break;
    case 'ImagePolicy':
      if (isSignetObject(object))
        sorted.imagePolicies.push(parseImagePolicy(object, { namespace, failOnEmptyAuthorities }));
      break;
    case 'ImagePolicyException':
      if (isSignetObject(object)) sorted.exceptions.push(parseImagePolicyException(object, { namespace }));
      break;
    case 'Secret':
      sorted.secrets.push(secretFromObject(object, namespace));
      break;
    case 'ConfigMap':
      sorted.configMaps.push(configMapFromObject(object, namespace));
      break;
    default:
      break;
  }
}

/** The stand-in of a policy that does not parse, which denies what it may match; none for other kinds. */
function unreadableOf(
  object: Record<string, unknown>,
  index: number,
  error: unknown,
  namespace: string,
): UnreadablePolicy | undefined {
  if (object.kind === 'ClusterImagePolicy') return unreadablePolicy(object, index, error);
  if (object.kind === 'ImagePolicy' && isSignetObject(object))
    return unreadableImagePolicy(object, index, error, namespace);
  return undefined;
}

/**
 * What can still be read of an ImagePolicy that does not parse: it denies what it may match in
 * its namespace (enforce, as every ImagePolicy), or nothing when even its namespace is unreadable.
 */
function unreadableImagePolicy(
  object: Record<string, unknown>,
  index: number,
  error: unknown,
  fallbackNamespace: string,
): UnreadablePolicy | undefined {
  const metadata = isObject(object.metadata) ? object.metadata : {};
  const written = metadata.namespace;
  const namespace = typeof written === 'string' && written !== '' ? written : fallbackNamespace;
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace)) return undefined;
  return { ...unreadablePolicy(object, index, error), kind: 'ImagePolicy', namespace, mode: 'enforce' };
}

/** What can still be read of a ClusterImagePolicy that does not parse. */
function unreadablePolicy(object: Record<string, unknown>, index: number, error: unknown): UnreadablePolicy {
  const metadata = isObject(object.metadata) ? object.metadata : {};
  const spec = isObject(object.spec) ? object.spec : {};
  const images = Array.isArray(spec.images) ? spec.images : [];
  const globs = images.map((image) =>
    isObject(image) && typeof image.glob === 'string' ? image.glob : undefined,
  );
  const readable = globs.length > 0 && globs.every((glob) => glob !== undefined && glob !== '');
  return {
    kind: 'ClusterImagePolicy',
    name: typeof metadata.name === 'string' && metadata.name !== '' ? metadata.name : `unnamed-${index + 1}`,
    apiVersion: typeof object.apiVersion === 'string' ? object.apiVersion : undefined,
    globs: readable ? (globs as string[]) : undefined,
    mode: spec.mode === 'warn' ? 'warn' : 'enforce',
    reason: error instanceof Error ? error.message : String(error),
    generation: generationOf(object),
  };
}

/** What several sources (files) hold together; the last config ConfigMap wins. */
export function mergePolicyObjects(all: readonly PolicyObjects[]): PolicyObjects {
  return {
    policies: all.flatMap((o) => o.policies),
    imagePolicies: all.flatMap((o) => o.imagePolicies),
    exceptions: all.flatMap((o) => o.exceptions),
    unreadable: all.flatMap((o) => o.unreadable),
    trustRoots: all.flatMap((o) => o.trustRoots),
    secrets: all.flatMap((o) => o.secrets),
    configMaps: all.flatMap((o) => o.configMaps),
    problems: all.flatMap((o) => o.problems),
    config: all.at(-1)?.config ?? parsePolicyControllerConfig(undefined),
  };
}
