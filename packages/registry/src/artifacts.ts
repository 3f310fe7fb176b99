// What is stored next to an image, in the two places OCI registries keep it: under tags derived
// from the image's digest (cosign's `sha256-<hex>.sig`), and as referrers of the image (OCI 1.1).
// The caller says which tags, layers and artifact types it wants; this package reads them, bounded
// and digest-verified, and never judges what it read. Which signature format lives where is the
// verifier's knowledge (its `formats/`), not this package's.
import type { DigestRef, RepositoryRef } from './references.js';

/**
 * The layers of one media type in the manifest tagged `<tagPrefix>sha256-<hex>.<suffix>`: one
 * artifact per layer, with the layer's annotations.
 */
export interface DigestTagQuery {
  readonly kind: 'digest-tag';
  /** What follows `sha256-<hex>.` in the tag: `sig`, `att`. */
  readonly suffix: string;
  /** The media type of the layers that are artifacts; other layers are ignored. */
  readonly mediaType: string;
}

/** Which listed referrers a query reads, by their `artifactType`. */
export type ArtifactTypeMatch =
  | { readonly startsWith: string }
  | { readonly equals: string }
  | { readonly includes: string };

/** Which layers of a referrer are artifacts. */
export type LayerPick =
  /** Exactly one layer whose media type starts with `mediaTypePrefix`; a referrer with none or several is skipped ("2 `name` layers"). */
  | { readonly pick: 'one'; readonly mediaTypePrefix: string; readonly name: string }
  /** Every layer of `mediaType`, each an artifact (`... layer N`). */
  | { readonly pick: 'each'; readonly mediaType: string }
  /** The first layer, whatever its media type says. */
  | { readonly pick: 'first' };

/**
 * The referrers of the image whose listed `artifactType` matches, and the layers `layers` picks in
 * each: one artifact per layer picked, with the referrer's annotations (the manifest's over the
 * descriptor's) beside the layer's.
 */
export interface ReferrersQuery {
  readonly kind: 'referrers';
  readonly artifactType: ArtifactTypeMatch;
  /**
   * Set when the referrer's manifest must state a matching `artifactType` too, not only its
   * listing: what such an artifact is called where one is skipped ("…, not a Sigstore bundle").
   */
  readonly confirmedAs?: string;
  /**
   * Referrers to pass over, by an annotation: unread when their listing has it (the referrers API
   * copies each referrer's manifest annotations there), their layers unread when only their
   * manifest has it (the fallback tag as cosign writes it lists none). What cannot count is not
   * fetched; a referrer without the annotation is read.
   */
  readonly skipListed?: ListedAnnotationMatch;
  readonly layers: LayerPick;
}

/** A listed referrer whose `annotation` equals, or differs from, a value. */
export type ListedAnnotationMatch =
  | { readonly annotation: string; readonly equals: string }
  | { readonly annotation: string; readonly differsFrom: string };

export type ArtifactQuery = DigestTagQuery | ReferrersQuery;

/** What to look for next to an image, and where. */
export interface DiscoveryRequest {
  /** The image, by digest. Artifacts are looked up for this digest only. */
  readonly image: DigestRef;
  /** Where the artifacts are stored, when not in the image's own repository (`source[].oci`). */
  readonly signatureRepository?: RepositoryRef;
  /** Prefix of the digest tags (`source[].tagPrefix`). */
  readonly tagPrefix?: string;
  readonly query: ArtifactQuery;
}

/** Where a found artifact came from, for messages and logs: `registry/repo@sha256:...` or `...:tag layer 0`. */
export type ArtifactSource = string;

/** One artifact a query found: its bytes, digest-verified, and what was said about it. */
export interface StoredArtifact {
  readonly source: ArtifactSource;
  readonly bytes: Uint8Array;
  /** The layer's annotations. */
  readonly annotations: Readonly<Record<string, string>>;
  /** The manifest's: the tagged manifest's, or the referrer's (the manifest's over its listing's). */
  readonly manifestAnnotations: Readonly<Record<string, string>>;
  /** The referrer's `artifactType`, or for a layer of a digest tag the layer's media type. */
  readonly artifactType: string;
}

/**
 * A candidate a query listed but that could not be used (a layer over the size cap, a blob that
 * does not match its digest, a malformed referrer): passed over so that the others are still
 * read, and reported so that a denial says what was there.
 */
export interface UnreadableCandidate {
  readonly source: ArtifactSource;
  readonly reason: string;
}
