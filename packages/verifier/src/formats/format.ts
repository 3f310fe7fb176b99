// The seam between where signatures are stored and what they mean. A signature format (cosign's
// legacy tags, Sigstore bundle referrers, ...) says what to ask the registry for, what each find
// is to the signature layer, what counts as a signature or an attestation, and how to explain
// that an image has none of it but has some in another format. One file per format in this folder;
// `index.ts` registers them. The registry runs the queries and knows no format; the signature
// layer decodes artifacts and knows no registry.
import type { ArtifactQuery, StoredArtifact } from '@signet/registry';
import type { DiscoveredArtifact, FoundArtifact } from '../artifacts.js';

/** What an authority looks for: image signatures, or attestations (it names some). */
export type Evidence = 'signatures' | 'attestations';

/** How a deployment has discovery look, beyond the formats themselves. */
export interface DiscoverySettings {
  /** policy-controller's `enable-oci11`: also look among OCI 1.1 referrers where a format can. */
  readonly oci11Referrers: boolean;
}

/** The word for one piece of evidence in messages. */
export type EvidenceNoun = 'signature' | 'attestation';

/** One registry query of a format, and what the signature layer makes of its finds. */
export interface FormatQuery {
  readonly query: ArtifactQuery;
  /** How the artifacts it finds are encoded; also what an unreadable candidate was listed as. */
  readonly encoding: FoundArtifact['format'];
  /** One find, as the signature layer reads it. */
  read(stored: StoredArtifact): FoundArtifact;
}

export interface SignatureFormat {
  /** What an authority's `signatureFormat` says to choose it: `legacy`, `bundle`. */
  readonly name: string;
  /** What to ask the registry for to find `evidence` in this format. */
  queries(evidence: Evidence, settings: DiscoverySettings): readonly FormatQuery[];
  /**
   * Whether an artifact this format handed over counts as `evidence` (a bundle announced as
   * another predicate type is not a signature). Decided before verifying; verification decides the rest.
   */
  counts(artifact: DiscoveredArtifact, evidence: Evidence): boolean;
  /** Where an authority reading this format looked, after "no signature found": `in the legacy .sig/.att tags`. */
  searched(noun: EvidenceNoun): string;
  /**
   * `count` pieces of evidence in this format, said to an authority that reads another:
   * `2 Sigstore bundles (what cosign 3 writes by default), which this authority does not read`.
   */
  found(noun: EvidenceNoun, count: number): string;
}

/** How an artifact is encoded, or was listed when it could not be read. */
export function encodingOf(artifact: DiscoveredArtifact): FoundArtifact['format'] {
  return artifact.format === 'unreadable' ? artifact.listedAs : artifact.format;
}
