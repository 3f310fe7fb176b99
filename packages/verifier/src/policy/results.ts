// What verification reports, per authority: `@signet/core`'s `AuthorityResult` and
// `VerificationFailure` (core combines them), extended with codes, counts and the signer.
import type { AuthorityResult, VerificationFailure } from '@signet/core';
import type { FoundArtifact } from '../artifacts.js';
import { type CheckCode, kindOf, type SignatureCheckError } from '../sigstore/errors.js';
import type { SignerIdentity, VerifiedArtifact } from '../sigstore/verify.js';

/**
 * Why an authority (or a policy) failed: core's failure with a code. `reason` reads like
 * `no valid signature: 2 found, 0 verified`; `cause` holds the artifact errors (an
 * `AggregateError` when several), each with its own cause chain.
 */
export interface CheckFailure extends VerificationFailure {
  readonly code: CheckCode;
}

/** How many artifacts an authority considered, and how many verified (signature, identity, binding). */
export interface ArtifactCounts {
  readonly found: number;
  readonly verified: number;
}

/** An artifact that did not verify, and why. */
export interface RejectedArtifact {
  readonly source: string;
  readonly format: FoundArtifact['format'];
  readonly error: SignatureCheckError;
}

type Passed = Extract<AuthorityResult, { readonly passed: true }>;
type Failed = Extract<AuthorityResult, { readonly passed: false }>;

/** One authority's result: core's `AuthorityResult` with what was found, verified and rejected. */
export type AuthorityCheck =
  | (Passed & {
      /** Who signed: the first verified signature's (or passing attestation's) signer; absent for `static`. */
      readonly signer: SignerIdentity | undefined;
      readonly static: boolean;
      readonly counts: ArtifactCounts;
      readonly signatures: readonly VerifiedArtifact[];
      /** Per wanted attestation name, the verified attestations whose policy passed. */
      readonly attestations: Readonly<Record<string, readonly VerifiedArtifact[]>>;
      readonly rejected: readonly RejectedArtifact[];
    })
  | (Failed & {
      readonly failure: CheckFailure;
      readonly counts: ArtifactCounts;
      readonly rejected: readonly RejectedArtifact[];
    });

/** A failure with the kind its code implies. */
export function failureOf(code: CheckCode, reason: string, cause?: unknown): CheckFailure {
  const kind = kindOf(code);
  return cause === undefined ? { kind, reason, code } : { kind, reason, code, cause };
}
