// The hand-off between the registry layer (finds what is stored next to an image) and the
// signature layer (decides whether what was found is valid for a policy). Neither side knows how
// the other works: the registry layer never judges a signature, the signature layer never does I/O.

/** A repository in a registry, already normalised (`index.docker.io`, `library/alpine`). */
export interface RepositoryRef {
  /** Registry host with optional port, e.g. `index.docker.io`, `127.0.0.1:5000`. */
  readonly registry: string;
  /** Repository path, e.g. `library/alpine`. */
  readonly repository: string;
}

/** One image manifest (or index) by content digest. */
export interface DigestRef extends RepositoryRef {
  /** `sha256:<64 hex>`. */
  readonly digest: string;
}

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

/** Everything discovery hands over for one request. */
export type DiscoveredArtifact = FoundArtifact | UnreadableArtifact;

/** What to look for next to an image. */
export interface DiscoveryRequest {
  /** The admitted image, by digest. Signatures are looked up for this digest only. */
  readonly image: DigestRef;
  /** Where signatures are stored, when not in the image's own repository (`source[].oci`). */
  readonly signatureRepository?: RepositoryRef;
  /** Prefix of the legacy `.sig`/`.att` tags (`source[].tagPrefix`). */
  readonly tagPrefix?: string;
  readonly legacySignatures: boolean;
  readonly legacyAttestations: boolean;
  readonly bundles: boolean;
}
