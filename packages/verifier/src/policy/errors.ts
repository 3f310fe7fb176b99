/** Why a ClusterImagePolicy cannot be compiled. Callers branch on the code, never on the message. */
export type PolicyCompileCode =
  /** A policy `type` other than `cel`, `cue` and `rego`, or CUE/Rego without the policy engines. */
  | 'UNSUPPORTED_POLICY_TYPE'
  /** A policy without a source, with several, or whose ConfigMap cannot be read. */
  | 'UNSUPPORTED_POLICY_SOURCE'
  /** A `remote` policy that could not be fetched, or whose content does not match its `sha256sum`. */
  | 'REMOTE_POLICY_FAILED'
  /** A CUE or Rego policy that does not compile. */
  | 'INVALID_POLICY'
  /** The CUE or Rego engine failed while compiling the policy (not built, out of time or memory). */
  | 'POLICY_ENGINE_FAILED'
  /** A `kms` Signet cannot use: no KMS key source configured, `ca-cert.kms`, a malformed URI, an endpoint not allowed. */
  | 'UNSUPPORTED_KMS'
  /** A public key that does not parse. */
  | 'INVALID_KEY'
  /** A `ca-cert` certificate that does not parse. */
  | 'INVALID_CERTIFICATE'
  /** An `issuerRegExp`/`subjectRegExp` that is not a valid regular expression. */
  | 'INVALID_REGEXP'
  /** A CEL expression that does not parse. */
  | 'INVALID_CEL'
  /** A `source[].oci` that is not a repository name. */
  | 'INVALID_SOURCE'
  /** A `signatureFormat` that is not registered (`CompileContext.formats`). */
  | 'UNSUPPORTED_SIGNATURE_FORMAT'
  /** An authority that no parser should have let through (no key, keyless or static). */
  | 'INVALID_AUTHORITY'
  /** A Signet annotation with a value it does not take (`signet.dev/index-signatures`). */
  | 'INVALID_ANNOTATION';

/** Where in a ClusterImagePolicy a problem is: field path and a label naming the authority/attestation. */
export interface PolicySite {
  readonly policy: string;
  /** `spec.authorities[0].attestations[1].policy`. */
  readonly path: string;
  /** `authority "release", attestation "provenance"`. */
  readonly label: string;
}

/**
 * A ClusterImagePolicy cannot be enforced as written. The message names the policy, the field
 * path and the authority or attestation: `ClusterImagePolicy "p": spec.authorities[0] (authority
 * "a"): ...`; a namespace's ImagePolicy, compiled as one, by its `namespace/name` (a
 * ClusterImagePolicy's name has no `/`): `ImagePolicy "shop/release": ...`.
 */
export class PolicyCompileError extends Error {
  override readonly name = 'PolicyCompileError';
  readonly code: PolicyCompileCode;
  readonly policy: string;
  /** Field path inside the policy: `spec.authorities[0].attestations[1].policy`. */
  readonly path: string;
  readonly problem: string;

  constructor(code: PolicyCompileCode, where: PolicySite, problem: string, options?: ErrorOptions) {
    super(
      `${where.policy.includes('/') ? 'ImagePolicy' : 'ClusterImagePolicy'} ${JSON.stringify(where.policy)}: ${where.path} (${where.label}): ${problem}`,
      options,
    );
    this.code = code;
    this.policy = where.policy;
    this.path = where.path;
    this.problem = problem;
  }
}
