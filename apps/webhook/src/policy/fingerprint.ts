// The fingerprint of a compiled ClusterImagePolicy: a digest of everything its verdicts depend on,
// the same in every replica and after every restart. It keys the in-memory cache of passes and the
// verification records in the cluster: a record admits only under the fingerprint it was written
// with, so a policy edit, a rotated key, a changed TrustRoot or TUF root, another Signet version
// invalidates every pass at once, and undoing the change makes them valid again.
//
// What goes in: Signet's version (verification itself may change between versions), the policy's
// kind, namespace, name, uid and spec, its `signet.dev/` annotations (they change what it requires,
// e.g. `signet.dev/index-signatures`; all but `signet.dev/stale-if-error`, which changes only how
// long a record may stand in), the signature formats an authority without `signatureFormat` reads
// (`--signature-format-default`), the config-policy-controller settings, and the content of exactly what compiling
// it read: each Secret and ConfigMap it looked up (or that it was missing), each trust root it used
// (the TrustedRoot it resolved to, whether from a TrustRoot object, TUF or the embedded root) and
// each KMS key (the public key the store gave). Unrelated objects (the TLS Secret, another policy's
// keys) are left out, so rotating them invalidates nothing.
import { createHash } from 'node:crypto';
import type { ClusterImagePolicy, ImagePolicy, PolicyControllerConfig } from '@signet/k8s-types';
import type { CompileContext, CompiledTrustRoot, KmsKeyLookup, TrustRootResolver } from '@signet/verifier';
import { STALE_IF_ERROR_ANNOTATION } from './stale-if-error-annotation.js';

/** What compiling one policy read, each entry `what name` -> digest of its content (or why none). */
export class PolicyReads {
  readonly #reads = new Map<string, string>();

  note(what: string, content: string): void {
    this.#reads.set(what, content);
  }

  /** Sorted, so the order compiles happen in never matters. */
  entries(): [string, string][] {
    return [...this.#reads.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
}

function sha256(text: string | Uint8Array): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A trust root's content digest, computed once per loaded root. */
const rootDigests = new WeakMap<CompiledTrustRoot, string>();
function rootDigest(root: CompiledTrustRoot): string {
  let digest = rootDigests.get(root);
  if (digest === undefined) {
    digest = sha256(JSON.stringify(root.trustedRoot));
    rootDigests.set(root, digest);
  }
  return digest;
}

function kmsDigest(lookup: KmsKeyLookup): string {
  return lookup.kind === 'ready'
    ? sha256(`${lookup.key.hashAlgorithm ?? ''}\n${lookup.key.pem}`)
    : lookup.kind;
}

/** A map's content, keys sorted, each value digested (Secret values are bytes). */
function dataDigest(data: Readonly<Record<string, Uint8Array | string>> | undefined): string {
  if (data === undefined) return 'missing';
  const entries = Object.keys(data)
    .sort()
    .map((key) => [key, sha256(data[key] as Uint8Array | string)]);
  return sha256(JSON.stringify(entries));
}

/**
 * `context` with every lookup noted in `reads`: Secrets, ConfigMaps, trust roots and KMS keys are
 * answered as before, and what they answered is remembered for the fingerprint.
 */
export function recordingContext(context: CompileContext, reads: PolicyReads): CompileContext {
  const { lookupSecret, lookupConfigMap, trustRoots, kmsKeys } = context;
  const resolver: TrustRootResolver | undefined =
    trustRoots &&
    (async (name) => {
      const what = `trust-root ${name ?? '(default)'}`;
      try {
        const root = await trustRoots(name);
        reads.note(what, `${root.name} ${rootDigest(root)}`);
        return root;
      } catch (error) {
        reads.note(what, 'unavailable');
        throw error;
      }
    });
  return {
    ...context,
    ...(lookupSecret && {
      lookupSecret: (namespace, name) => {
        const data = lookupSecret(namespace, name);
        reads.note(`secret ${namespace}/${name}`, dataDigest(data));
        return data;
      },
    }),
    ...(lookupConfigMap && {
      lookupConfigMap: (namespace, name) => {
        const data = lookupConfigMap(namespace, name);
        reads.note(`configmap ${namespace}/${name}`, dataDigest(data));
        return data;
      },
    }),
    ...(resolver && { trustRoots: resolver }),
    ...(kmsKeys && {
      kmsKeys: {
        ...(kmsKeys.checkUri ? { checkUri: (uri: string) => kmsKeys.checkUri?.(uri) } : {}),
        lookup: async (uri: string) => {
          const found = await kmsKeys.lookup(uri);
          reads.note(`kms ${uri}`, kmsDigest(found));
          return found;
        },
      },
    }),
  };
}

export interface FingerprintInputs {
  /** Signet's version: verification itself may differ between versions. */
  readonly signet: string;
  readonly policy: ClusterImagePolicy | ImagePolicy;
  readonly config: PolicyControllerConfig;
  /** The formats an authority without `signatureFormat` reads, in order. */
  readonly formats: readonly string[];
  readonly reads: PolicyReads;
}

/** JSON with object keys sorted: the same value always gives the same text, however it was written. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object)
      .filter((key) => object[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(object[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The `signet.dev/` annotations of a policy but the grace period, in a stable order. */
function signetAnnotations(annotations: Readonly<Record<string, string>> | undefined): [string, string][] {
  return Object.entries(annotations ?? {})
    .filter(([key]) => key.startsWith('signet.dev/') && key !== STALE_IF_ERROR_ANNOTATION)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `sha256:<hex>` over everything the policy's verdicts depend on. */
export function policyFingerprint({ signet, policy, config, formats, reads }: FingerprintInputs): string {
  const content = canonical({
    format: 1,
    signet,
    kind: policy.kind,
    namespace: policy.kind === 'ImagePolicy' ? policy.metadata.namespace : null,
    uid: policy.metadata.uid ?? null,
    name: policy.metadata.name,
    spec: policy.spec,
    annotations: signetAnnotations(policy.metadata.annotations),
    formats,
    config,
    reads: reads.entries(),
  });
  return `sha256:${sha256(content)}`;
}
