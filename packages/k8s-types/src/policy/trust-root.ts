// The `TrustRoot` parser (`policy.sigstore.dev/v1alpha1`): exactly one of a TUF mirror, a TUF
// repository in the object, or Sigstore keys given inline.
import {
  expectObject,
  type Fail,
  type JsonObject,
  optionalList,
  optionalObject,
  optionalString,
  requiredString,
} from '../fields.js';
import { compact, failFor, listIfPresent, objectLabel, parseMetadata, specOf } from './parse.js';
import {
  type CertificateAuthority,
  POLICY_GROUP,
  type SigstoreKeys,
  type TransparencyLogInstance,
  type TrustRoot,
  type TrustRootRemote,
  type TrustRootRepository,
  type TrustRootSpec,
} from './types.js';

/** Parses a `TrustRoot` of `policy.sigstore.dev/v1alpha1`. Throws `PolicyParseError`. */
export function parseTrustRoot(body: unknown): TrustRoot {
  const fail = failFor(objectLabel('TrustRoot', body));
  const root = expectObject(body, '', fail);
  if (root.apiVersion !== `${POLICY_GROUP}/v1alpha1`) {
    fail('apiVersion', `must be "${POLICY_GROUP}/v1alpha1", got ${JSON.stringify(root.apiVersion ?? null)}`);
  }
  if (root.kind !== 'TrustRoot')
    fail('kind', `must be "TrustRoot", got ${JSON.stringify(root.kind ?? null)}`);
  const metadata = parseMetadata(root, fail);
  const spec = specOf(root, fail);
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
  return {
    apiVersion: `${POLICY_GROUP}/v1alpha1`,
    kind: 'TrustRoot',
    metadata,
    spec: compact<TrustRootSpec>({
      remote: remote && parseRemote(remote, 'spec.remote', fail),
      repository: repository && parseRepository(repository, 'spec.repository', fail),
      sigstoreKeys: keys && parseSigstoreKeys(keys, 'spec.sigstoreKeys', fail),
    }),
  };
}

function tufTargets(obj: JsonObject, path: string, fail: Fail) {
  return {
    root: requiredString(obj, 'root', path, fail),
    targets: optionalString(obj, 'targets', path, fail),
    trustedRootTarget: optionalString(obj, 'trustedRootTarget', path, fail),
  };
}

function parseRemote(obj: JsonObject, path: string, fail: Fail): TrustRootRemote {
  const { root, ...rest } = tufTargets(obj, path, fail);
  return compact<TrustRootRemote>({ root, mirror: requiredString(obj, 'mirror', path, fail), ...rest });
}

function parseRepository(obj: JsonObject, path: string, fail: Fail): TrustRootRepository {
  const { root, ...rest } = tufTargets(obj, path, fail);
  return compact<TrustRootRepository>({
    root,
    mirrorFS: requiredString(obj, 'mirrorFS', path, fail),
    ...rest,
  });
}

function parseSigstoreKeys(keys: JsonObject, path: string, fail: Fail): SigstoreKeys {
  const logs = (key: string) => listIfPresent(keys, key, path, fail, (v, p) => parseTLog(v, p, fail));
  return compact<SigstoreKeys>({
    certificateAuthorities: optionalList(keys, 'certificateAuthorities', path, fail, (v, p) =>
      parseCA(v, p, fail),
    ),
    tLogs: logs('tLogs'),
    ctLogs: logs('ctLogs'),
    timestampAuthorities: listIfPresent(keys, 'timestampAuthorities', path, fail, (v, p) =>
      parseCA(v, p, fail),
    ),
  });
}

function parseCA(value: unknown, path: string, fail: Fail): CertificateAuthority {
  const ca = expectObject(value, path, fail);
  const certChain = requiredString(ca, 'certChain', path, fail);
  const subject = optionalObject(ca, 'subject', path, fail);
  const subjectPath = `${path}.subject`;
  return compact<CertificateAuthority>({
    certChain,
    uri: optionalString(ca, 'uri', path, fail),
    subject:
      subject &&
      compact({
        organization: optionalString(subject, 'organization', subjectPath, fail),
        commonName: optionalString(subject, 'commonName', subjectPath, fail),
      }),
  });
}

function parseTLog(value: unknown, path: string, fail: Fail): TransparencyLogInstance {
  const t = expectObject(value, path, fail);
  return compact<TransparencyLogInstance>({
    publicKey: requiredString(t, 'publicKey', path, fail),
    baseURL: optionalString(t, 'baseURL', path, fail),
    hashAlgorithm: optionalString(t, 'hashAlgorithm', path, fail),
  });
}
