// Stale-if-error in the admission pipeline: after a verification, each policy that failed for an
// infrastructure reason is put to @signet/core's `applyGrace` with the verification record of the
// image (if any), the policy's fingerprint now and its grace period. Core decides; this file only
// finds what core needs and reports what it decided.
import {
  applyGrace,
  type GracedPolicy,
  type GraceRefusal,
  type ImageCheck,
  type ImageReference,
  type PassRecord,
  repositoryOf,
} from '@signet/core';
import type { AdmissionRequest } from '@signet/k8s-types';
import type { VerifiedImage } from '../http/review.js';
import type { SnapshotPolicy } from '../policy/policy-store.js';

/** Where records come from, and who hears of what they admitted. */
export interface GraceRecords {
  /** The grace period of a policy without its own annotation (`--stale-if-error`); 0: off. */
  readonly defaultGraceMs: number;
  /** The authenticated record of `image` (`registry/repository@digest`) passing `policy` at `fingerprint`. */
  find(policy: string, fingerprint: string, image: string): PassRecord | undefined;
  /** An image was admitted on a record (a real request, not a dry run or an audit). */
  graced(request: AdmissionRequest, image: string, graced: GracedPolicy): void;
  /** An infrastructure failure no record stood in for, and why. */
  refused(refusal: GraceRefusal): void;
}

/** The verification with every infrastructure failure a record may stand in for admitted on it. */
export function withGrace(
  verification: VerifiedImage,
  check: ImageCheck<SnapshotPolicy> & { readonly kind: 'verify' },
  grace: GraceRecords,
  request: AdmissionRequest,
  now: number,
): VerifiedImage {
  const failedForInfrastructure = verification.checks.some(
    (c) => !c.passed && c.failure.kind === 'infrastructure',
  );
  if (!failedForInfrastructure) return verification;
  const reference: ImageReference = check.reference;
  const policies = new Map(check.policies.map((p) => [p.name, p]));
  const real = request.dryRun !== true;
  const image = reference.digest === undefined ? undefined : `${repositoryOf(reference)}@${reference.digest}`;
  const applied = applyGrace(verification.verdict, {
    reference,
    now,
    policy: (name) => {
      const policy = policies.get(name);
      if (policy === undefined) return undefined;
      return {
        fingerprint: policy.compiled.revision,
        graceMs: policy.staleIfErrorMs ?? grace.defaultGraceMs,
      };
    },
    record: (name) => {
      const policy = policies.get(name);
      if (policy === undefined || image === undefined) return undefined;
      return grace.find(name, policy.compiled.revision, image);
    },
    refused: (_policy, refusal) => {
      if (real) grace.refused(refusal);
    },
  });
  if (applied.graced.length === 0) return verification;
  if (real) for (const graced of applied.graced) grace.graced(request, reference.original, graced);
  return { ...verification, verdict: applied.verdict };
}
