import { PolicyParseError } from './errors.js';
import {
  describe,
  expectObject,
  type Fail,
  isObject,
  type JsonObject,
  join,
  optionalBoolean,
  optionalList,
  optionalObject,
  optionalString,
  requiredString,
  stringItem,
} from './fields.js';
import type {
  Attestation,
  Authority,
  CertificateAuthority,
  ClusterImagePolicy,
  ClusterImagePolicySpec,
  Identity,
  KeylessRef,
  KeyRef,
  LabelSelector,
  LabelSelectorRequirement,
  MatchResource,
  NoMatchPolicy,
  Policy,
  PolicyControllerConfig,
  PolicyObjectMeta,
  SigstoreKeys,
  Source,
  StaticRef,
  TransparencyLogInstance,
  TrustRoot,
  TrustRootSpec,
} from './policy-types.js';
import { CLUSTER_IMAGE_POLICY_VERSIONS, POLICY_GROUP } from './policy-types.js';

export interface ClusterImagePolicyParseOptions {
  /** Reject a policy without authorities, like policy-controller's `fail-on-empty-authorities` (default true). */
  readonly failOnEmptyAuthorities?: boolean;
}

const HASH_ALGORITHMS: ReadonlySet<string> = new Set(['sha224', 'sha256', 'sha384', 'sha512']);
const OPERATORS: ReadonlySet<string> = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

type Out = Record<string, unknown>;

function put(out: Out, key: string, value: unknown): void {
  if (value !== undefined) out[key] = value;
}

/** Reads `key` as one of `allowed`; an empty string counts as absent, as in the Go types. */
function optionalEnum(obj: JsonObject, key: string, path: string, fail: Fail, allowed: readonly string[]) {
  const value = optionalString(obj, key, path, fail);
  if (value === undefined || value === '') return undefined;
  if (!allowed.includes(value)) {
    fail(join(path, key), `must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value;
}

function failFor(object: string | undefined): Fail {
  return (path, problem) => {
    throw new PolicyParseError(object, path, problem);
  };
}

function objectLabel(kind: string, body: unknown): string | undefined {
  const name = isObject(body) && isObject(body.metadata) ? body.metadata.name : undefined;
  return typeof name === 'string' ? `${kind}/${name}` : undefined;
}

function parseMetadata(body: JsonObject, fail: Fail): PolicyObjectMeta {
  if (body.metadata === undefined || body.metadata === null) fail('metadata', 'required object');
  const meta = expectObject(body.metadata, 'metadata', fail);
  const name = requiredString(meta, 'name', 'metadata', fail);
  if (name === '') fail('metadata.name', 'must not be empty');
  const out: Out = { name };
  put(out, 'uid', optionalString(meta, 'uid', 'metadata', fail));
  put(out, 'resourceVersion', optionalString(meta, 'resourceVersion', 'metadata', fail));
  const generation = meta.generation;
  if (generation !== undefined && generation !== null) {
    if (typeof generation !== 'number' || !Number.isInteger(generation)) {
      fail('metadata.generation', `must be an integer, got ${describe(generation)}`);
    }
    out.generation = generation;
  }
  put(out, 'labels', stringMap(meta, 'labels', 'metadata', fail));
  put(out, 'annotations', stringMap(meta, 'annotations', 'metadata', fail));
  return out as unknown as PolicyObjectMeta;
}

function stringMap(
  obj: JsonObject,
  key: string,
  path: string,
  fail: Fail,
): Record<string, string> | undefined {
  const map = optionalObject(obj, key, path, fail);
  if (map === undefined) return undefined;
  const mapPath = join(path, key);
  for (const [k, v] of Object.entries(map)) {
    if (typeof v !== 'string') fail(join(mapPath, k), `must be a string, got ${describe(v)}`);
  }
  return map as Record<string, string>;
}

/**
 * Parses a `ClusterImagePolicy` of `policy.sigstore.dev/v1beta1` or `/v1alpha1` (for instance
 * from YAML or a watch). Throws {@link PolicyParseError} naming the field path. Policy `type`s
 * the verifier may not support are parsed, not rejected.
 */
export function parseClusterImagePolicy(
  body: unknown,
  options: ClusterImagePolicyParseOptions = {},
): ClusterImagePolicy {
  const fail = failFor(objectLabel('ClusterImagePolicy', body));
  const root = expectObject(body, '', fail);
  const apiVersion = root.apiVersion;
  const versions = CLUSTER_IMAGE_POLICY_VERSIONS.map((v) => `${POLICY_GROUP}/${v}`);
  if (typeof apiVersion !== 'string' || !versions.includes(apiVersion)) {
    fail('apiVersion', `must be one of ${versions.join(', ')}, got ${JSON.stringify(apiVersion ?? null)}`);
  }
  if (root.kind !== 'ClusterImagePolicy') {
    fail('kind', `must be "ClusterImagePolicy", got ${JSON.stringify(root.kind ?? null)}`);
  }
  const metadata = parseMetadata(root, fail);
  if (root.spec === undefined || root.spec === null) fail('spec', 'required object');
  const spec = parseSpec(expectObject(root.spec, 'spec', fail), fail, options.failOnEmptyAuthorities ?? true);
  return { apiVersion, kind: 'ClusterImagePolicy', metadata, spec } as ClusterImagePolicy;
}

function parseSpec(spec: JsonObject, fail: Fail, failOnEmptyAuthorities: boolean): ClusterImagePolicySpec {
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
  const out: Out = { images, authorities };
  const policy = optionalObject(spec, 'policy', 'spec', fail);
  if (policy !== undefined) out.policy = parsePolicy(policy, 'spec.policy', fail);
  put(out, 'mode', optionalEnum(spec, 'mode', 'spec', fail, ['enforce', 'warn']));
  if (spec.match != null)
    out.match = optionalList(spec, 'match', 'spec', fail, (v, p) => parseMatch(v, p, fail));
  return out as unknown as ClusterImagePolicySpec;
}

function parseAuthority(value: unknown, path: string, fail: Fail): Authority {
  const a = expectObject(value, path, fail);
  const out: Out = {};
  put(out, 'name', optionalString(a, 'name', path, fail));
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
  if (key) out.key = parseKeyRef(key, join(path, 'key'), fail);
  if (keyless) out.keyless = parseKeyless(keyless, join(path, 'keyless'), fail);
  if (staticRef) out.static = parseStatic(staticRef, join(path, 'static'), fail);
  if (a.source != null) out.source = optionalList(a, 'source', path, fail, (v, p) => parseSource(v, p, fail));
  const ctlog = optionalObject(a, 'ctlog', path, fail);
  if (ctlog) out.ctlog = urlAndTrustRoot(ctlog, join(path, 'ctlog'), fail);
  if (a.attestations != null) {
    out.attestations = optionalList(a, 'attestations', path, fail, (v, p) => parseAttestation(v, p, fail));
  }
  const tsa = optionalObject(a, 'rfc3161timestamp', path, fail);
  if (tsa) out.rfc3161timestamp = urlAndTrustRoot(tsa, join(path, 'rfc3161timestamp'), fail, false);
  put(out, 'signatureFormat', optionalEnum(a, 'signatureFormat', path, fail, ['legacy', 'bundle']));
  return out as unknown as Authority;
}

function parseKeyRef(key: JsonObject, path: string, fail: Fail): KeyRef {
  const out: Out = {};
  put(out, 'data', optionalString(key, 'data', path, fail));
  put(out, 'kms', optionalString(key, 'kms', path, fail));
  const secretRef = optionalObject(key, 'secretRef', path, fail);
  if (secretRef) {
    const p = join(path, 'secretRef');
    const ref: Out = {};
    put(ref, 'name', optionalString(secretRef, 'name', p, fail));
    put(ref, 'namespace', optionalString(secretRef, 'namespace', p, fail));
    if (!ref.name) fail(join(p, 'name'), 'required string');
    out.secretRef = ref;
  }
  const sources = ['data', 'secretRef', 'kms'].filter((k) => out[k] !== undefined && out[k] !== '');
  if (sources.length !== 1) {
    fail(
      path,
      `exactly one of data, secretRef or kms is required, got ${sources.length === 0 ? 'none' : sources.join(', ')}`,
    );
  }
  const hash = optionalString(key, 'hashAlgorithm', path, fail);
  if (hash !== undefined && hash !== '') {
    if (!HASH_ALGORITHMS.has(hash)) {
      fail(
        join(path, 'hashAlgorithm'),
        `must be one of ${[...HASH_ALGORITHMS].join(', ')}, got ${JSON.stringify(hash)}`,
      );
    }
    out.hashAlgorithm = hash;
  }
  return out as unknown as KeyRef;
}

function parseKeyless(keyless: JsonObject, path: string, fail: Fail): KeylessRef {
  const identities = optionalList(keyless, 'identities', path, fail, (v, p) => parseIdentity(v, p, fail));
  const out: Out = { identities };
  put(out, 'url', optionalString(keyless, 'url', path, fail));
  const caCert = optionalObject(keyless, 'ca-cert', path, fail);
  if (caCert) out['ca-cert'] = parseKeyRef(caCert, join(path, 'ca-cert'), fail);
  put(out, 'trustRootRef', optionalString(keyless, 'trustRootRef', path, fail));
  put(out, 'insecureIgnoreSCT', optionalBoolean(keyless, 'insecureIgnoreSCT', path, fail));
  if (identities.length === 0) fail(join(path, 'identities'), 'at least one identity is required');
  return out as unknown as KeylessRef;
}

function parseIdentity(value: unknown, path: string, fail: Fail): Identity {
  const id = expectObject(value, path, fail);
  const out: Out = {};
  for (const key of ['issuer', 'subject', 'issuerRegExp', 'subjectRegExp']) {
    const v = optionalString(id, key, path, fail);
    if (v !== undefined && v !== '') out[key] = v;
  }
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
  return out as Identity;
}

function parseStatic(s: JsonObject, path: string, fail: Fail): StaticRef {
  const action = optionalEnum(s, 'action', path, fail, ['pass', 'fail']);
  if (action === undefined) fail(join(path, 'action'), 'required: pass or fail');
  const out: Out = { action };
  put(out, 'message', optionalString(s, 'message', path, fail));
  return out as unknown as StaticRef;
}

function parseSource(value: unknown, path: string, fail: Fail): Source {
  const s = expectObject(value, path, fail);
  const out: Out = {};
  put(out, 'oci', optionalString(s, 'oci', path, fail));
  put(out, 'tagPrefix', optionalString(s, 'tagPrefix', path, fail));
  if (s.signaturePullSecrets != null) {
    out.signaturePullSecrets = optionalList(s, 'signaturePullSecrets', path, fail, (v, p) => {
      const ref = expectObject(v, p, fail);
      return { name: requiredString(ref, 'name', p, fail) };
    });
  }
  return out as Source;
}

function urlAndTrustRoot(obj: JsonObject, path: string, fail: Fail, withUrl = true): Out {
  const out: Out = {};
  if (withUrl) put(out, 'url', optionalString(obj, 'url', path, fail));
  put(out, 'trustRootRef', optionalString(obj, 'trustRootRef', path, fail));
  return out;
}

function parseAttestation(value: unknown, path: string, fail: Fail): Attestation {
  const a = expectObject(value, path, fail);
  const out: Out = {
    name: requiredString(a, 'name', path, fail),
    predicateType: requiredString(a, 'predicateType', path, fail),
  };
  if (out.predicateType === '') fail(join(path, 'predicateType'), 'must not be empty');
  const policy = optionalObject(a, 'policy', path, fail);
  if (policy) out.policy = parsePolicy(policy, join(path, 'policy'), fail);
  return out as unknown as Attestation;
}

function parsePolicy(p: JsonObject, path: string, fail: Fail): Policy {
  const out: Out = { type: requiredString(p, 'type', path, fail) };
  put(out, 'data', optionalString(p, 'data', path, fail));
  const remote = optionalObject(p, 'remote', path, fail);
  if (remote) {
    const rp = join(path, 'remote');
    const r: Out = {};
    put(r, 'url', optionalString(remote, 'url', rp, fail));
    put(r, 'sha256sum', optionalString(remote, 'sha256sum', rp, fail));
    out.remote = r;
  }
  const cm = optionalObject(p, 'configMapRef', path, fail);
  if (cm) {
    const cp = join(path, 'configMapRef');
    const c: Out = {};
    for (const k of ['name', 'namespace', 'key']) put(c, k, optionalString(cm, k, cp, fail));
    out.configMapRef = c;
  }
  for (const k of ['fetchConfigFile', 'includeSpec', 'includeObjectMeta', 'includeTypeMeta']) {
    put(out, k, optionalBoolean(p, k, path, fail));
  }
  return out as unknown as Policy;
}

function parseMatch(value: unknown, path: string, fail: Fail): MatchResource {
  const m = expectObject(value, path, fail);
  const out: Out = {};
  for (const k of ['group', 'version', 'resource']) put(out, k, optionalString(m, k, path, fail));
  const selector = optionalObject(m, 'selector', path, fail);
  if (selector) out.selector = parseSelector(selector, join(path, 'selector'), fail);
  return out as MatchResource;
}

function parseSelector(s: JsonObject, path: string, fail: Fail): LabelSelector {
  const out: Out = {};
  put(out, 'matchLabels', stringMap(s, 'matchLabels', path, fail));
  if (s.matchExpressions != null) {
    out.matchExpressions = optionalList(
      s,
      'matchExpressions',
      path,
      fail,
      (v, p): LabelSelectorRequirement => {
        const e = expectObject(v, p, fail);
        const key = requiredString(e, 'key', p, fail);
        const operator = requiredString(e, 'operator', p, fail);
        if (!OPERATORS.has(operator)) {
          fail(
            join(p, 'operator'),
            `must be one of ${[...OPERATORS].join(', ')}, got ${JSON.stringify(operator)}`,
          );
        }
        const requirement: Out = { key, operator };
        if (e.values != null) requirement.values = optionalList(e, 'values', p, fail, stringItem(fail));
        return requirement as unknown as LabelSelectorRequirement;
      },
    );
  }
  return out as LabelSelector;
}

/** Parses a `TrustRoot` of `policy.sigstore.dev/v1alpha1`. Throws {@link PolicyParseError}. */
export function parseTrustRoot(body: unknown): TrustRoot {
  const fail = failFor(objectLabel('TrustRoot', body));
  const root = expectObject(body, '', fail);
  if (root.apiVersion !== `${POLICY_GROUP}/v1alpha1`) {
    fail('apiVersion', `must be "${POLICY_GROUP}/v1alpha1", got ${JSON.stringify(root.apiVersion ?? null)}`);
  }
  if (root.kind !== 'TrustRoot')
    fail('kind', `must be "TrustRoot", got ${JSON.stringify(root.kind ?? null)}`);
  const metadata = parseMetadata(root, fail);
  if (root.spec === undefined || root.spec === null) fail('spec', 'required object');
  const spec = expectObject(root.spec, 'spec', fail);
  const out: Out = {};
  const remote = optionalObject(spec, 'remote', 'spec', fail);
  const repository = optionalObject(spec, 'repository', 'spec', fail);
  const keys = optionalObject(spec, 'sigstoreKeys', 'spec', fail);
  const forms = [remote && 'remote', repository && 'repository', keys && 'sigstoreKeys'].filter(Boolean);
  if (forms.length !== 1) {
    fail(
      'spec',
      `exactly one of remote, repository or sigstoreKeys is required, got ${forms.length === 0 ? 'none' : forms.join(', ')}`,
    );
  }
  if (remote) out.remote = parseTufForm(remote, 'spec.remote', 'mirror', fail);
  if (repository) out.repository = parseTufForm(repository, 'spec.repository', 'mirrorFS', fail);
  if (keys) out.sigstoreKeys = parseSigstoreKeys(keys, 'spec.sigstoreKeys', fail);
  return { apiVersion: `${POLICY_GROUP}/v1alpha1`, kind: 'TrustRoot', metadata, spec: out as TrustRootSpec };
}

function parseTufForm(obj: JsonObject, path: string, location: 'mirror' | 'mirrorFS', fail: Fail): Out {
  const out: Out = {
    root: requiredString(obj, 'root', path, fail),
    [location]: requiredString(obj, location, path, fail),
  };
  put(out, 'targets', optionalString(obj, 'targets', path, fail));
  put(out, 'trustedRootTarget', optionalString(obj, 'trustedRootTarget', path, fail));
  return out;
}

function parseSigstoreKeys(keys: JsonObject, path: string, fail: Fail): SigstoreKeys {
  const out: Out = {
    certificateAuthorities: optionalList(keys, 'certificateAuthorities', path, fail, (v, p) =>
      parseCA(v, p, fail),
    ),
  };
  for (const k of ['tLogs', 'ctLogs']) {
    if (keys[k] != null) out[k] = optionalList(keys, k, path, fail, (v, p) => parseTLog(v, p, fail));
  }
  if (keys.timestampAuthorities != null) {
    out.timestampAuthorities = optionalList(keys, 'timestampAuthorities', path, fail, (v, p) =>
      parseCA(v, p, fail),
    );
  }
  return out as unknown as SigstoreKeys;
}

function parseCA(value: unknown, path: string, fail: Fail): CertificateAuthority {
  const ca = expectObject(value, path, fail);
  const out: Out = { certChain: requiredString(ca, 'certChain', path, fail) };
  put(out, 'uri', optionalString(ca, 'uri', path, fail));
  const subject = optionalObject(ca, 'subject', path, fail);
  if (subject) {
    const sp = join(path, 'subject');
    const s: Out = {};
    put(s, 'organization', optionalString(subject, 'organization', sp, fail));
    put(s, 'commonName', optionalString(subject, 'commonName', sp, fail));
    out.subject = s;
  }
  return out as unknown as CertificateAuthority;
}

function parseTLog(value: unknown, path: string, fail: Fail): TransparencyLogInstance {
  const t = expectObject(value, path, fail);
  const out: Out = { publicKey: requiredString(t, 'publicKey', path, fail) };
  put(out, 'baseURL', optionalString(t, 'baseURL', path, fail));
  put(out, 'hashAlgorithm', optionalString(t, 'hashAlgorithm', path, fail));
  return out as unknown as TransparencyLogInstance;
}

const TRUE_WORDS: ReadonlySet<string> = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE_WORDS: ReadonlySet<string> = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/**
 * Reads the `data` of the `config-policy-controller` ConfigMap. Missing keys take the upstream
 * defaults (`no-match-policy: deny`, `fail-on-empty-authorities: true`, `enable-oci11: false`);
 * booleans accept what Go's `strconv.ParseBool` accepts.
 */
export function parsePolicyControllerConfig(data: unknown): PolicyControllerConfig {
  const fail = failFor('ConfigMap/config-policy-controller');
  const map = data === undefined || data === null ? {} : expectObject(data, 'data', fail);
  const noMatch = optionalEnum(map, 'no-match-policy', 'data', fail, ['deny', 'warn', 'allow']);
  const bool = (key: string, fallback: boolean): boolean => {
    const value = optionalString(map, key, 'data', fail);
    if (value === undefined || value === '') return fallback;
    if (TRUE_WORDS.has(value)) return true;
    if (FALSE_WORDS.has(value)) return false;
    return fail(join('data', key), `must be true or false, got ${JSON.stringify(value)}`);
  };
  return {
    noMatchPolicy: (noMatch ?? 'deny') as NoMatchPolicy,
    failOnEmptyAuthorities: bool('fail-on-empty-authorities', true),
    enableOCI11: bool('enable-oci11', false),
  };
}
