// Types of the `policy.sigstore.dev` objects, with the upstream (sigstore policy-controller)
// field names, so existing policy YAML parses unchanged. v1alpha1 and v1beta1 of
// ClusterImagePolicy share one spec shape.

export const POLICY_GROUP = 'policy.sigstore.dev';
export const CLUSTER_IMAGE_POLICY_VERSIONS = ['v1beta1', 'v1alpha1'] as const;
export type ClusterImagePolicyVersion = (typeof CLUSTER_IMAGE_POLICY_VERSIONS)[number];

/** The namespace label that opts a namespace in, as with policy-controller. */
export const INCLUDE_NAMESPACE_LABEL = 'policy.sigstore.dev/include';
export const POLICY_CONTROLLER_CONFIG_NAME = 'config-policy-controller';

export interface PolicyObjectMeta {
  readonly name: string;
  readonly uid?: string;
  readonly generation?: number;
  readonly resourceVersion?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface ClusterImagePolicy {
  readonly apiVersion: `${typeof POLICY_GROUP}/${ClusterImagePolicyVersion}`;
  readonly kind: 'ClusterImagePolicy';
  readonly metadata: PolicyObjectMeta;
  readonly spec: ClusterImagePolicySpec;
}

export type PolicyMode = 'enforce' | 'warn';

export interface ClusterImagePolicySpec {
  readonly images: readonly ImagePattern[];
  readonly authorities: readonly Authority[];
  readonly policy?: Policy;
  /** `enforce` when absent. */
  readonly mode?: PolicyMode;
  readonly match?: readonly MatchResource[];
}

export interface ImagePattern {
  readonly glob: string;
}

export type SignatureFormat = 'legacy' | 'bundle';

export interface Authority {
  /** Upstream defaults a missing name to `authority-<index>`. */
  readonly name?: string;
  readonly key?: KeyRef;
  readonly keyless?: KeylessRef;
  readonly static?: StaticRef;
  readonly source?: readonly Source[];
  readonly ctlog?: TLog;
  readonly attestations?: readonly Attestation[];
  readonly rfc3161timestamp?: RFC3161Timestamp;
  /** `legacy` (the `.sig` tag) when absent. */
  readonly signatureFormat?: SignatureFormat;
}

export interface SecretReference {
  readonly name?: string;
  readonly namespace?: string;
}

export interface LocalObjectReference {
  readonly name?: string;
}

export interface KeyRef {
  readonly secretRef?: SecretReference;
  /** PEM public key(s). */
  readonly data?: string;
  readonly kms?: string;
  readonly hashAlgorithm?: string;
}

export interface StaticRef {
  readonly action: 'pass' | 'fail';
  readonly message?: string;
}

export interface Source {
  readonly oci?: string;
  readonly signaturePullSecrets?: readonly LocalObjectReference[];
  readonly tagPrefix?: string;
}

export interface TLog {
  readonly url?: string;
  readonly trustRootRef?: string;
}

export interface KeylessRef {
  readonly url?: string;
  readonly identities: readonly Identity[];
  readonly 'ca-cert'?: KeyRef;
  readonly trustRootRef?: string;
  readonly insecureIgnoreSCT?: boolean;
}

export interface Identity {
  readonly issuer?: string;
  readonly subject?: string;
  readonly issuerRegExp?: string;
  readonly subjectRegExp?: string;
}

export interface RFC3161Timestamp {
  readonly trustRootRef?: string;
}

export interface Attestation {
  readonly name: string;
  readonly predicateType: string;
  readonly policy?: Policy;
}

export interface RemotePolicy {
  readonly url?: string;
  readonly sha256sum?: string;
}

export interface ConfigMapReference {
  readonly name?: string;
  readonly namespace?: string;
  readonly key?: string;
}

/** A policy over the image or an attestation. `type` is parsed as-is; the verifier decides. */
export interface Policy {
  readonly type: string;
  readonly data?: string;
  readonly remote?: RemotePolicy;
  readonly configMapRef?: ConfigMapReference;
  readonly fetchConfigFile?: boolean;
  readonly includeSpec?: boolean;
  readonly includeObjectMeta?: boolean;
  readonly includeTypeMeta?: boolean;
}

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values?: readonly string[];
}

export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

export interface MatchResource {
  readonly group?: string;
  readonly version?: string;
  readonly resource?: string;
  readonly selector?: LabelSelector;
}

export interface TrustRoot {
  readonly apiVersion: `${typeof POLICY_GROUP}/v1alpha1`;
  readonly kind: 'TrustRoot';
  readonly metadata: PolicyObjectMeta;
  readonly spec: TrustRootSpec;
}

/** Exactly one of the three forms is set. Byte fields are base64 strings, as in the JSON. */
export interface TrustRootSpec {
  readonly remote?: TrustRootRemote;
  readonly repository?: TrustRootRepository;
  readonly sigstoreKeys?: SigstoreKeys;
}

export interface TrustRootRemote {
  readonly root: string;
  readonly mirror: string;
  readonly targets?: string;
  readonly trustedRootTarget?: string;
}

export interface TrustRootRepository {
  readonly root: string;
  readonly mirrorFS: string;
  readonly targets?: string;
  readonly trustedRootTarget?: string;
}

export interface DistinguishedName {
  readonly organization?: string;
  readonly commonName?: string;
}

export interface CertificateAuthority {
  readonly subject?: DistinguishedName;
  readonly uri?: string;
  /** base64 of a PEM certificate chain. */
  readonly certChain: string;
}

export interface TransparencyLogInstance {
  readonly baseURL?: string;
  readonly hashAlgorithm?: string;
  /** base64 of a PEM public key. */
  readonly publicKey: string;
}

export interface SigstoreKeys {
  readonly certificateAuthorities: readonly CertificateAuthority[];
  readonly tLogs?: readonly TransparencyLogInstance[];
  readonly ctLogs?: readonly TransparencyLogInstance[];
  readonly timestampAuthorities?: readonly CertificateAuthority[];
}

export type NoMatchPolicy = 'deny' | 'warn' | 'allow';

/** The keys of the `config-policy-controller` ConfigMap, with upstream defaults applied. */
export interface PolicyControllerConfig {
  /** What happens to an image that no policy matches (default `deny`). */
  readonly noMatchPolicy: NoMatchPolicy;
  /** Reject policies without authorities (default `true`). */
  readonly failOnEmptyAuthorities: boolean;
  /** Look for attestations through the OCI 1.1 referrers API (default `false`). */
  readonly enableOCI11: boolean;
}

/** A policy's mode: `enforce` unless it says `warn`. The one place that default is applied. */
export function policyModeOf(policy: { readonly spec: { readonly mode?: PolicyMode } }): PolicyMode {
  return policy.spec.mode ?? 'enforce';
}

/**
 * Signet's own annotation on a ClusterImagePolicy (upstream's schema has no such field): `"true"`
 * lets the policy admit Pods whose images are tags, verified by the digest the tag points at
 * when admitted. The kubelet may later pull a different image under that tag.
 */
export const ALLOW_UNPINNED_TAGS_ANNOTATION = 'signet.dev/allow-unpinned-tags';
