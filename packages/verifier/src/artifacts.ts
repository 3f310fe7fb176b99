// What the signature layer verifies: the artifacts a signature format (`formats/`) made of what
// the registry found next to an image. An artifact's `format` says how it is encoded, which is how
// `sigstore/decode.ts` reads it; several signature formats may hand over one encoding. The
// registry never judges a signature; the signature layer never does I/O.

/** Where a found artifact came from, for messages and logs: `registry/repo@sha256:...` or `...:tag`. */
export type ArtifactSource = string;

/** A legacy cosign image signature: one layer of the `sha256-<hex>.sig` manifest. */
export interface LegacySignature {
  readonly format: 'legacy-signature';
  readonly source: ArtifactSource;
  /** The layer blob: the exact signed simple-signing payload bytes (digest-verified). */
  readonly payload: Uint8Array;
  /** The layer descriptor's annotations (`dev.cosignproject.cosign/signature`, certificate, chain, bundle, rfc3161timestamp). */
  readonly annotations: Readonly<Record<string, string>>;
}

/** A legacy cosign attestation: one DSSE envelope layer of the `sha256-<hex>.att` manifest. */
export interface LegacyAttestation {
  readonly format: 'legacy-attestation';
  readonly source: ArtifactSource;
  /** The DSSE envelope JSON bytes (digest-verified). */
  readonly envelope: Uint8Array;
  readonly annotations: Readonly<Record<string, string>>;
}

/** A Sigstore bundle attached as an OCI 1.1 referrer (through the referrers API or the fallback tag). */
export interface BundleArtifact {
  readonly format: 'bundle';
  readonly source: ArtifactSource;
  /** The bundle JSON bytes (digest-verified). */
  readonly bundle: Uint8Array;
  /** The referrer manifest's `artifactType` (a `application/vnd.dev.sigstore.bundle...+json` type). */
  readonly artifactType: string;
  /** `dev.sigstore.bundle.predicateType` annotation, when present. */
  readonly predicateType: string | undefined;
}

export type FoundArtifact = LegacySignature | LegacyAttestation | BundleArtifact;

/**
 * A candidate the registry layer found but could not use (a layer over the size cap, a blob that
 * does not match its digest, a malformed referrer): passed over so that the others are still
 * verified, and reported so that a denial says what was there.
 */
export interface UnreadableArtifact {
  readonly format: 'unreadable';
  readonly source: ArtifactSource;
  /** What it was listed as. */
  readonly listedAs: FoundArtifact['format'];
  readonly reason: string;
}

/** What a signature format hands over: artifacts, and the candidates it could not read. */
export type DiscoveredArtifact = FoundArtifact | UnreadableArtifact;
