// The `ClusterImagePolicy` parser (v1beta1 and v1alpha1 share one spec shape). Errors name the
// field path; policy `type`s the verifier may not support are parsed, not rejected.
import {
  expectObject,
  type Fail,
  type JsonObject,
  join,
  optionalBoolean,
  optionalList,
  optionalObject,
  optionalString,
  requiredString,
  stringItem,
} from '../fields.js';
import { WORKLOAD_LIST } from '../workloads.js';
import { kmsUriProblem } from './kms-uri.js';
import {
  compact,
  failFor,
  isOneOf,
  listIfPresent,
  objectLabel,
  optionalEnum,
  parseMetadata,
  specOf,
  stringMap,
} from './parse.js';
import {
  type Attestation,
  type Authority,
  CLUSTER_IMAGE_POLICY_VERSIONS,
  type ClusterImagePolicy,
  type ClusterImagePolicySpec,
  type ConfigMapReference,
  type Identity,
  type KeylessRef,
  type KeyRef,
  type LabelSelector,
  type LabelSelectorRequirement,
  type MatchResource,
  POLICY_GROUP,
  type Policy,
  type RemotePolicy,
  type SecretReference,
  type Source,
  type StaticRef,
  type TLog,
} from './types.js';

export interface ClusterImagePolicyParseOptions {
  /** Reject a policy without authorities, like policy-controller's `fail-on-empty-authorities` (default true). */
  readonly failOnEmptyAuthorities?: boolean;
}

const VERSIONS = CLUSTER_IMAGE_POLICY_VERSIONS.map((v) => `${POLICY_GROUP}/${v}` as const);
const HASH_ALGORITHMS = ['sha224', 'sha256', 'sha384', 'sha512'] as const;
const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;
/** `match[].resource` values: the resources Signet is registered for (policy-controller's list plus replicationcontrollers). */
const MATCH_RESOURCES: readonly string[] = WORKLOAD_LIST.map((workload) => workload.resource);

/**
 * Parses a `ClusterImagePolicy` of `policy.sigstore.dev/v1beta1` or `/v1alpha1` (for instance
 * from YAML or a watch). Throws `PolicyParseError` naming the field path.
 */
export function parseClusterImagePolicy(
  body: unknown,
  options: ClusterImagePolicyParseOptions = {},
): ClusterImagePolicy {
  const fail = failFor(objectLabel('ClusterImagePolicy', body));
  const root = expectObject(body, '', fail);
  const apiVersion = root.apiVersion;
  if (typeof apiVersion !== 'string' || !isOneOf(apiVersion, VERSIONS)) {
    return fail(
      'apiVersion',
      `must be one of ${VERSIONS.join(', ')}, got ${JSON.stringify(apiVersion ?? null)}`,
    );
  }
  if (root.kind !== 'ClusterImagePolicy') {
    fail('kind', `must be "ClusterImagePolicy", got ${JSON.stringify(root.kind ?? null)}`);
  }
  const metadata = parseMetadata(root, fail);
  const spec = parseClusterImagePolicySpec(specOf(root, fail), fail, options.failOnEmptyAuthorities ?? true);
  return { apiVersion, kind: 'ClusterImagePolicy', metadata, spec };
}

/** The spec of a ClusterImagePolicy, which an ImagePolicy shares (with restrictions of its own). */
export function parseClusterImagePolicySpec(
  spec: JsonObject,
  fail: Fail,
  failOnEmptyAuthorities: boolean,
): ClusterImagePolicySpec {
  const images = optionalList(spec, 'images', 'spec', fail, (value, path) => {
    const item = expectObject(value, path, fail);
    const glob = requiredString(item, 'glob', path, fail);
    if (glob === '') fail(join(path, 'glob'), 'must not be empty');
    return { glob };
  });
  if (images.length === 0) fail('spec.images', 'at least one image glob is required');
  const authorities = optionalList(spec, 'authorities', 'spec', fail, (v, p) => parseAuthority(v, p, fail));
  if (authorities.length === 0 && failOnEmptyAuthorities) {
    fail('spec.authorities', 'at least one authority is required (fail-on-empty-authorities is on)');
  }
  const policy = optionalObject(spec, 'policy', 'spec', fail);
  return compact<ClusterImagePolicySpec>({
    images,
    authorities,
    policy: policy === undefined ? undefined : parsePolicy(policy, 'spec.policy', fail),
    mode: optionalEnum(spec, 'mode', 'spec', fail, ['enforce', 'warn']),
    match: listIfPresent(spec, 'match', 'spec', fail, (v, p) => parseMatch(v, p, fail)),
  });
}

function parseAuthority(value: unknown, path: string, fail: Fail): Authority {
  const a = expectObject(value, path, fail);
  const key = optionalObject(a, 'key', path, fail);
  const keyless = optionalObject(a, 'keyless', path, fail);
  const staticRef = optionalObject(a, 'static', path, fail);
  const kinds = [key && 'key', keyless && 'keyless', staticRef && 'static'].filter(Boolean);
  if (kinds.length !== 1) {
    fail(
      path,
      `exactly one of key, keyless or static is required, got ${kinds.length === 0 ? 'none' : kinds.join(', ')}`,
    );
  }
  const ctlog = optionalObject(a, 'ctlog', path, fail);
  const tsa = optionalObject(a, 'rfc3161timestamp', path, fail);
  checkCombinations(a, staticRef !== undefined, path, fail);
  return compact<Authority>({
    name: optionalString(a, 'name', path, fail),
    key: key && parseKeyRef(key, join(path, 'key'), fail),
    keyless: keyless && parseKeyless(keyless, join(path, 'keyless'), fail),
    static: staticRef && parseStatic(staticRef, join(path, 'static'), fail),
    source: listIfPresent(a, 'source', path, fail, (v, p) => parseSource(v, p, fail)),
    ctlog: ctlog && parseTLog(ctlog, join(path, 'ctlog'), fail),
    attestations: listIfPresent(a, 'attestations', path, fail, (v, p) => parseAttestation(v, p, fail)),
    rfc3161timestamp:
      tsa &&
      compact({ trustRootRef: optionalString(tsa, 'trustRootRef', join(path, 'rfc3161timestamp'), fail) }),
    signatureFormat: optionalEnum(a, 'signatureFormat', path, fail, ['legacy', 'bundle']),
  });
}

/** policy-controller's rules across an authority's fields: static decides alone; one source. */
function checkCombinations(a: JsonObject, isStatic: boolean, path: string, fail: Fail): void {
  const present = (value: unknown) => value != null && !(Array.isArray(value) && value.length === 0);
  for (const field of isStatic ? (['attestations', 'source', 'ctlog', 'rfc3161timestamp'] as const) : []) {
    // A static authority checks no signature: evidence settings beside it would be ignored.
    if (present(a[field]))
      fail(join(path, field), 'cannot be combined with static (a static authority checks no signature)');
  }
  if (Array.isArray(a.source) && a.source.length > 1) {
    fail(
      join(path, 'source'),
      `only a single source is supported (as in policy-controller), got ${a.source.length}`,
    );
  }
}

function parseKeyRef(key: JsonObject, path: string, fail: Fail): KeyRef {
  const secretRef = optionalObject(key, 'secretRef', path, fail);
  const out = compact<KeyRef>({
    data: optionalString(key, 'data', path, fail),
    kms: optionalString(key, 'kms', path, fail),
    secretRef: secretRef && parseSecretRef(secretRef, join(path, 'secretRef'), fail),
    hashAlgorithm: optionalEnum(key, 'hashAlgorithm', path, fail, HASH_ALGORITHMS),
  });
  const sources = (['data', 'secretRef', 'kms'] as const).filter(
    (k) => out[k] !== undefined && out[k] !== '',
  );
  if (sources.length !== 1) {
    fail(
      path,
      `exactly one of data, secretRef or kms is required, got ${sources.length === 0 ? 'none' : sources.join(', ')}`,
    );
  }
  const kmsProblem = out.kms ? kmsUriProblem(out.kms) : undefined;
  if (kmsProblem !== undefined) fail(join(path, 'kms'), kmsProblem);
  return out;
}

function parseSecretRef(ref: JsonObject, path: string, fail: Fail): SecretReference {
  const name = optionalString(ref, 'name', path, fail);
  if (!name) fail(join(path, 'name'), 'required string');
  return compact<SecretReference>({ name, namespace: optionalString(ref, 'namespace', path, fail) });
}

function parseKeyless(keyless: JsonObject, path: string, fail: Fail): KeylessRef {
  const identities = optionalList(keyless, 'identities', path, fail, (v, p) => parseIdentity(v, p, fail));
  const caCert = optionalObject(keyless, 'ca-cert', path, fail);
  const out = compact<KeylessRef>({
    identities,
    url: optionalString(keyless, 'url', path, fail),
    'ca-cert': caCert && parseKeyRef(caCert, join(path, 'ca-cert'), fail),
    trustRootRef: optionalString(keyless, 'trustRootRef', path, fail),
    insecureIgnoreSCT: optionalBoolean(keyless, 'insecureIgnoreSCT', path, fail),
  });
  if (identities.length === 0) fail(join(path, 'identities'), 'at least one identity is required');
  if (out.url !== undefined && out.url !== '' && out['ca-cert'] !== undefined) {
    fail(path, 'url and ca-cert are exclusive (as in policy-controller): the CA is either Fulcio or ca-cert');
  }
  return out;
}

function parseIdentity(value: unknown, path: string, fail: Fail): Identity {
  const id = expectObject(value, path, fail);
  const read = (key: string) => {
    const v = optionalString(id, key, path, fail);
    return v === '' ? undefined : v;
  };
  const out = compact<Identity>({
    issuer: read('issuer'),
    subject: read('subject'),
    issuerRegExp: read('issuerRegExp'),
    subjectRegExp: read('subjectRegExp'),
  });
  if (out.issuer === undefined && out.issuerRegExp === undefined)
    fail(path, 'one of issuer or issuerRegExp is required');
  if (out.subject === undefined && out.subjectRegExp === undefined) {
    fail(path, 'one of subject or subjectRegExp is required');
  }
  if (out.issuer !== undefined && out.issuerRegExp !== undefined)
    fail(path, 'issuer and issuerRegExp are exclusive');
  if (out.subject !== undefined && out.subjectRegExp !== undefined) {
    fail(path, 'subject and subjectRegExp are exclusive');
  }
  return out;
}

function parseStatic(s: JsonObject, path: string, fail: Fail): StaticRef {
  const action = optionalEnum(s, 'action', path, fail, ['pass', 'fail']);
  if (action === undefined) return fail(join(path, 'action'), 'required: pass or fail');
  return compact<StaticRef>({ action, message: optionalString(s, 'message', path, fail) });
}

function parseSource(value: unknown, path: string, fail: Fail): Source {
  const s = expectObject(value, path, fail);
  return compact<Source>({
    oci: optionalString(s, 'oci', path, fail),
    tagPrefix: optionalString(s, 'tagPrefix', path, fail),
    signaturePullSecrets: listIfPresent(s, 'signaturePullSecrets', path, fail, (v, p) => {
      const ref = expectObject(v, p, fail);
      return { name: requiredString(ref, 'name', p, fail) };
    }),
  });
}

function parseTLog(obj: JsonObject, path: string, fail: Fail): TLog {
  return compact<TLog>({
    url: optionalString(obj, 'url', path, fail),
    trustRootRef: optionalString(obj, 'trustRootRef', path, fail),
  });
}

function parseAttestation(value: unknown, path: string, fail: Fail): Attestation {
  const a = expectObject(value, path, fail);
  const name = requiredString(a, 'name', path, fail);
  const predicateType = requiredString(a, 'predicateType', path, fail);
  if (predicateType === '') fail(join(path, 'predicateType'), 'must not be empty');
  const policy = optionalObject(a, 'policy', path, fail);
  if (policy !== undefined) {
    // These ask for parts of the admitted object, which only the spec-level policy receives.
    for (const field of ['fetchConfigFile', 'includeSpec', 'includeObjectMeta', 'includeTypeMeta']) {
      if (policy[field] != null) {
        fail(
          join(join(path, 'policy'), field),
          'is only allowed in spec.policy, not in an attestation policy',
        );
      }
    }
  }
  return compact<Attestation>({
    name,
    predicateType,
    policy: policy && parsePolicy(policy, join(path, 'policy'), fail),
  });
}

function parsePolicy(p: JsonObject, path: string, fail: Fail): Policy {
  const remote = optionalObject(p, 'remote', path, fail);
  const cm = optionalObject(p, 'configMapRef', path, fail);
  const flag = (key: string) => optionalBoolean(p, key, path, fail);
  return compact<Policy>({
    type: requiredString(p, 'type', path, fail),
    data: optionalString(p, 'data', path, fail),
    remote: remote && parseRemote(remote, join(path, 'remote'), fail),
    configMapRef: cm && parseConfigMapRef(cm, join(path, 'configMapRef'), fail),
    fetchConfigFile: flag('fetchConfigFile'),
    includeSpec: flag('includeSpec'),
    includeObjectMeta: flag('includeObjectMeta'),
    includeTypeMeta: flag('includeTypeMeta'),
  });
}

function parseRemote(remote: JsonObject, path: string, fail: Fail): RemotePolicy {
  return compact<RemotePolicy>({
    url: optionalString(remote, 'url', path, fail),
    sha256sum: optionalString(remote, 'sha256sum', path, fail),
  });
}

function parseConfigMapRef(cm: JsonObject, path: string, fail: Fail): ConfigMapReference {
  return compact<ConfigMapReference>({
    name: optionalString(cm, 'name', path, fail),
    namespace: optionalString(cm, 'namespace', path, fail),
    key: optionalString(cm, 'key', path, fail),
  });
}

function parseMatch(value: unknown, path: string, fail: Fail): MatchResource {
  const m = expectObject(value, path, fail);
  const selector = optionalObject(m, 'selector', path, fail);
  const out = compact<MatchResource>({
    group: optionalString(m, 'group', path, fail),
    version: optionalString(m, 'version', path, fail),
    resource: optionalString(m, 'resource', path, fail),
    selector: selector && parseSelector(selector, join(path, 'selector'), fail),
  });
  if (out.resource && !MATCH_RESOURCES.includes(out.resource)) {
    // An unknown resource would match nothing, silently: refuse it, as policy-controller does.
    fail(
      join(path, 'resource'),
      `unsupported resource ${JSON.stringify(out.resource)}; one of ${MATCH_RESOURCES.join(', ')}`,
    );
  }
  if (out.selector !== undefined && !out.resource && !out.group && !out.version) {
    fail(join(path, 'selector'), 'a selector needs a resource (or group/version) whose labels it matches');
  }
  return out;
}

function parseSelector(s: JsonObject, path: string, fail: Fail): LabelSelector {
  return compact<LabelSelector>({
    matchLabels: stringMap(s, 'matchLabels', path, fail),
    matchExpressions: listIfPresent(s, 'matchExpressions', path, fail, (v, p) =>
      parseRequirement(v, p, fail),
    ),
  });
}

function parseRequirement(value: unknown, path: string, fail: Fail): LabelSelectorRequirement {
  const e = expectObject(value, path, fail);
  const key = requiredString(e, 'key', path, fail);
  const operator = requiredString(e, 'operator', path, fail);
  if (!isOneOf(operator, OPERATORS)) {
    return fail(
      join(path, 'operator'),
      `must be one of ${OPERATORS.join(', ')}, got ${JSON.stringify(operator)}`,
    );
  }
  return compact<LabelSelectorRequirement>({
    key,
    operator,
    values: listIfPresent(e, 'values', path, fail, stringItem(fail)),
  });
}
