// What verification reports, per authority: structurally `@signet/core`'s `AuthorityResult` and
// `VerificationFailure` (core combines them), plus codes, counts and the signer for messages.
import type { FailureKind } from '@signet/core';
import type { FoundArtifact } from '../artifacts.js';
import { type CheckCode, kindOf, type SignatureCheckError } from '../sigstore/errors.js';
import type { SignerIdentity, VerifiedArtifact } from '../sigstore/verify.js';

/** Why an authority (or a policy) failed. Structurally a `@signet/core` `VerificationFailure`, plus a code. */
export interface CheckFailure {
  readonly kind: FailureKind;
  /** `no valid signature: 2 found, 0 verified (signature does not match key "release-2026")`. */
  readonly reason: string;
  readonly code: CheckCode;
  /** The artifact errors (an `AggregateError` when several), each with its own cause chain. */
  readonly cause?: unknown;
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

/** One authority's result. Structurally a `@signet/core` `AuthorityResult`. */
export type AuthorityCheck =
  | {
      readonly authority: string;
      readonly passed: true;
      /** Who signed: the first verified signature's (or passing attestation's) signer; absent for `static`. */
      readonly signer: SignerIdentity | undefined;
      readonly static: boolean;
      readonly counts: ArtifactCounts;
      readonly signatures: readonly VerifiedArtifact[];
      /** Per wanted attestation name, the verified attestations whose policy passed. */
      readonly attestations: Readonly<Record<string, readonly VerifiedArtifact[]>>;
      readonly rejected: readonly RejectedArtifact[];
    }
  | {
      readonly authority: string;
      readonly passed: false;
      readonly failure: CheckFailure;
      readonly counts: ArtifactCounts;
      readonly rejected: readonly RejectedArtifact[];
    };

/** A failure with the kind its code implies. */
export function failureOf(code: CheckCode, reason: string, cause?: unknown): CheckFailure {
  const kind = kindOf(code);
  return cause === undefined ? { kind, reason, code } : { kind, reason, code, cause };
}
