import type { FailureKind } from '@signet/core';

/**
 * Why one signature, attestation or authority did not verify. Callers branch on the code, never
 * on the message. The codes of malformed or unverifiable input are `infrastructure` failures
 * (the image could not be checked); every other code is a `policy` failure (it was checked and
 * does not satisfy the policy).
 */
export type CheckCode =
  /** The signature does not verify with the policy's key(s) or the certificate's key. */
  | 'SIGNATURE_MISMATCH'
  /** The certificate does not chain to a trusted CA, or was not valid at signing time. */
  | 'CERTIFICATE_ERROR'
  /** A keyless authority met a signature without a certificate. */
  | 'CERTIFICATE_MISSING'
  /** The certificate has no SCT, and the authority does not set `insecureIgnoreSCT`. */
  | 'SCT_MISSING'
  /** A transparency-log entry did not verify (SET, inclusion proof, or body). */
  | 'TLOG_ERROR'
  /** The authority requires a transparency-log entry and there is none. */
  | 'TLOG_MISSING'
  /** The log entry names another key or certificate than the one that signed. */
  | 'TLOG_SIGNER_MISMATCH'
  /** A timestamp did not verify, or fewer timestamps than required verified. */
  | 'TIMESTAMP_ERROR'
  /** No timestamp at all where one is required. */
  | 'TIMESTAMP_MISSING'
  /** The certificate's issuer or subject matches none of the authority's identities. */
  | 'IDENTITY_MISMATCH'
  /** The signed payload is about another image digest. */
  | 'BINDING_MISMATCH'
  /** The attestation's predicate type is not the one asked for. */
  | 'PREDICATE_TYPE_MISMATCH'
  /** An attestation's CEL, CUE or Rego policy returned false or could not be evaluated on the predicate. */
  | 'ATTESTATION_POLICY_FAILED'
  /** A CUE or Rego engine failed (deadline passed, memory exhausted, crashed): nothing was judged. */
  | 'POLICY_ENGINE_FAILED'
  /** No signature (or attestation) was found for the authority. */
  | 'NO_SIGNATURES'
  /** Signatures were found and none verified. */
  | 'NO_VALID_SIGNATURE'
  /** No verified attestation satisfies a wanted attestation of the authority. */
  | 'NO_MATCHING_ATTESTATION'
  /** A `static: {action: fail}` authority. */
  | 'STATIC_FAIL'
  /** The ClusterImagePolicy's own (spec-level) policy returned false. */
  | 'POLICY_FAILED'
  /** The artifact cannot be parsed (bad JSON, base64, PEM, certificate, envelope). */
  | 'MALFORMED_ARTIFACT'
  /** The artifact is well formed but of a kind Signet cannot verify. */
  | 'UNSUPPORTED_ARTIFACT'
  /** The trust root the authority needs could not be loaded. */
  | 'TRUST_ROOT_UNAVAILABLE'
  /** A Secret the authority references does not exist or holds no key. */
  | 'SECRET_UNAVAILABLE'
  /** The KMS key of `key.kms` could not be fetched, and no earlier fetch gave one. */
  | 'KMS_UNAVAILABLE'
  /**
   * Compiled offline (apply-time validation): the KMS key or `remote` trust root was checked for
   * form only and not fetched. Such a compile is never enforced.
   */
  | 'NOT_FETCHED'
  /** The registry could not be asked (unreachable, timeout, refused credentials, malformed answer). */
  | 'REGISTRY_UNAVAILABLE'
  /** An unexpected exception inside verification (a bug or input nobody anticipated). */
  | 'VERIFIER_ERROR';

const INFRASTRUCTURE_CODES: ReadonlySet<CheckCode> = new Set<CheckCode>([
  'MALFORMED_ARTIFACT',
  'UNSUPPORTED_ARTIFACT',
  'TRUST_ROOT_UNAVAILABLE',
  'SECRET_UNAVAILABLE',
  'KMS_UNAVAILABLE',
  'NOT_FETCHED',
  'REGISTRY_UNAVAILABLE',
  'POLICY_ENGINE_FAILED',
  'VERIFIER_ERROR',
]);

/** Whether a code means "could not be checked" (`infrastructure`) or "checked and refused" (`policy`). */
export function kindOf(code: CheckCode): FailureKind {
  return INFRASTRUCTURE_CODES.has(code) ? 'infrastructure' : 'policy';
}

/** A signature-layer check failed. `cause` keeps the underlying sigstore-js or parse error. */
export class SignatureCheckError extends Error {
  override readonly name = 'SignatureCheckError';
  readonly code: CheckCode;
  readonly kind: FailureKind;

  constructor(code: CheckCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.kind = kindOf(code);
  }
}

/** Runs `parse` and turns whatever it throws into a `MALFORMED_ARTIFACT` error about `what`. */
export function parsing<T>(what: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof SignatureCheckError) throw error;
    throw new SignatureCheckError('MALFORMED_ARTIFACT', `cannot parse ${what}`, { cause: error });
  }
}
