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

/**
 * The referrers of the image whose `artifactType` starts with `artifactType`: one artifact per
 * referrer, its one layer whose media type starts with `layerMediaType`, with the referrer's
 * annotations (the manifest's over the descriptor's).
 */
export interface ReferrersQuery {
  readonly kind: 'referrers';
  /** A prefix, so that one query covers every version of a media type. */
  readonly artifactType: string;
  /** A prefix, as `artifactType`. */
  readonly layerMediaType: string;
  /** What such an artifact is called where one is skipped: `Sigstore bundle` ("…, not a Sigstore bundle"). */
  readonly artifactName: string;
  /** What its layer is called there: `bundle` ("the referrer has 2 bundle layers, not exactly one"). */
  readonly layerName: string;
}

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
  /** The layer's annotations (a digest tag), or the referrer's, manifest over descriptor (referrers). */
  readonly annotations: Readonly<Record<string, string>>;
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
