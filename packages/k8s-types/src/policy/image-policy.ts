// The `ImagePolicy` parser (`policy.signet.dev/v1alpha1`): a ClusterImagePolicy spec, parsed by the
// same code, then refused where it would use what only a cluster admin may (ADR 0024): an
// ImagePolicy can only add requirements for images admitted in its own namespace.
import { expectObject } from '../fields.js';
import { parseClusterImagePolicySpec } from './cluster-image-policy.js';
import { checkTypeMeta, namespacedLabel, parseNamespacedMetadata } from './namespaced.js';
import { type ImagePolicy, SIGNET_POLICY_API_VERSION } from './namespaced-types.js';
import { failFor, specOf } from './parse.js';
import type { ClusterImagePolicySpec, KeyRef, Policy } from './types.js';

export interface ImagePolicyParseOptions {
  /** The namespace of an object that names none (a file's objects, as with kubectl). */
  readonly namespace?: string;
  /** Reject a policy without authorities, like `fail-on-empty-authorities` (default true). */
  readonly failOnEmptyAuthorities?: boolean;
}

/** One thing an ImagePolicy may not do, at `path`. */
export interface Loosening {
  readonly path: string;
  readonly problem: string;
}

/**
 * Parses an `ImagePolicy`. Throws `PolicyParseError` naming the field path, for a malformed
 * object as for one that tries to loosen what the cluster requires (see {@link looseningsOf}).
 */
export function parseImagePolicy(body: unknown, options: ImagePolicyParseOptions = {}): ImagePolicy {
  const fail = failFor(namespacedLabel('ImagePolicy', body));
  const root = expectObject(body, '', fail);
  checkTypeMeta(root, 'ImagePolicy', fail);
  const metadata = parseNamespacedMetadata(root, fail, options.namespace);
  const spec = parseClusterImagePolicySpec(specOf(root, fail), fail, options.failOnEmptyAuthorities ?? true);
  const [first] = looseningsOf(spec, metadata.namespace);
  if (first !== undefined) fail(first.path, first.problem);
  const { mode: _mode, ...rest } = spec;
  return {
    apiVersion: SIGNET_POLICY_API_VERSION,
    kind: 'ImagePolicy',
    metadata,
    spec: spec.mode === 'enforce' ? { ...rest, mode: 'enforce' } : rest,
  };
}

/**
 * What a ClusterImagePolicy spec does that an ImagePolicy of `namespace` may not: downgrade to
 * `warn`, pass images by `static: pass`, read Secrets or ConfigMaps of another namespace, or make
 * Signet use its own credentials or network position on the team's behalf (`kms` keys, fetched
 * with Signet's cloud identity; `policy.remote`, fetched from any URL).
 */
export function looseningsOf(spec: ClusterImagePolicySpec, namespace: string): Loosening[] {
  const found: Loosening[] = [];
  if (spec.mode === 'warn') {
    found.push({
      path: 'spec.mode',
      problem:
        'an ImagePolicy only adds requirements, so it enforces: mode must be enforce (try a policy out with `signet audit -f` or `signet verify`)',
    });
  }
  spec.authorities.forEach((authority, i) => {
    const at = `spec.authorities[${i}]`;
    if (authority.static?.action === 'pass') {
      found.push({
        path: `${at}.static.action`,
        problem:
          'an ImagePolicy cannot pass images unverified (static: pass); an ImagePolicyException exempts images for a while',
      });
    }
    if (authority.key) found.push(...keyLoosenings(authority.key, `${at}.key`, namespace));
    const caCert = authority.keyless?.['ca-cert'];
    if (caCert) found.push(...keyLoosenings(caCert, `${at}.keyless.ca-cert`, namespace));
    authority.attestations?.forEach((attestation, j) => {
      if (attestation.policy) {
        found.push(...policyLoosenings(attestation.policy, `${at}.attestations[${j}].policy`, namespace));
      }
    });
  });
  if (spec.policy) found.push(...policyLoosenings(spec.policy, 'spec.policy', namespace));
  return found;
}

function foreign(namespace: string | undefined, own: string): boolean {
  return namespace !== undefined && namespace !== '' && namespace !== own;
}

function keyLoosenings(key: KeyRef, path: string, namespace: string): Loosening[] {
  const found: Loosening[] = [];
  if (key.kms) {
    found.push({
      path: `${path}.kms`,
      problem:
        "a KMS key is read with Signet's own cloud identity, which only a ClusterImagePolicy may use; put the public key in data or in a Secret of this namespace",
    });
  }
  if (foreign(key.secretRef?.namespace, namespace)) {
    found.push({
      path: `${path}.secretRef.namespace`,
      problem: `an ImagePolicy reads Secrets of its own namespace ${JSON.stringify(namespace)} only, got ${JSON.stringify(key.secretRef?.namespace)}`,
    });
  }
  return found;
}

function policyLoosenings(policy: Policy, path: string, namespace: string): Loosening[] {
  const found: Loosening[] = [];
  if (policy.remote) {
    found.push({
      path: `${path}.remote`,
      problem:
        'an ImagePolicy cannot make Signet fetch a URL; give the policy in data or in a ConfigMap of this namespace',
    });
  }
  if (foreign(policy.configMapRef?.namespace, namespace)) {
    found.push({
      path: `${path}.configMapRef.namespace`,
      problem: `an ImagePolicy reads ConfigMaps of its own namespace ${JSON.stringify(namespace)} only, got ${JSON.stringify(policy.configMapRef?.namespace)}`,
    });
  }
  return found;
}
