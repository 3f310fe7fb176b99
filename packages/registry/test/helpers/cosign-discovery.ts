// The queries the verifier's legacy and bundle formats make (its `formats/legacy.ts` and
// `bundle.ts`), for the discovery tests here: cosign's `.sig` and `.att` tags, Sigstore bundle
// referrers, and with `enable-oci11` the legacy ones among referrers, run together as one image's
// discovery is.
import type {
  ArtifactQuery,
  DiscoveryRequest,
  StoredArtifact,
  UnreadableCandidate,
} from '../../src/artifacts.js';
import type { RegistryClient } from '../../src/client.js';
import type { RegistryCall } from '../../src/deadline.js';
import { type DiscoveryLimits, discoverArtifacts, type Truncation } from '../../src/discovery.js';

const SIMPLESIGNING = 'application/vnd.dev.cosign.simplesigning.v1+json';
const DSSE = 'application/vnd.dsse.envelope.v1+json';

export const SIGNATURES: ArtifactQuery = { kind: 'digest-tag', suffix: 'sig', mediaType: SIMPLESIGNING };
export const ATTESTATIONS: ArtifactQuery = { kind: 'digest-tag', suffix: 'att', mediaType: DSSE };
export const BUNDLES: ArtifactQuery = {
  kind: 'referrers',
  artifactType: { startsWith: 'application/vnd.dev.sigstore.bundle' },
  confirmedAs: 'Sigstore bundle',
  layers: { pick: 'one', mediaTypePrefix: 'application/vnd.dev.sigstore.bundle', name: 'bundle' },
};
/** With policy-controller's `enable-oci11`: cosign's experimental signature referrers, in-toto referrers. */
export const OCI11_SIGNATURES: ArtifactQuery = {
  kind: 'referrers',
  artifactType: { equals: 'application/vnd.dev.cosign.artifact.sig.v1+json' },
  layers: { pick: 'each', mediaType: SIMPLESIGNING },
};
export const OCI11_ATTESTATIONS: ArtifactQuery = {
  kind: 'referrers',
  artifactType: { includes: 'in-toto' },
  layers: { pick: 'first' },
};

/** Where to look, and which of the queries to run. */
export interface Wanted extends Omit<DiscoveryRequest, 'query'> {
  readonly legacySignatures: boolean;
  readonly legacyAttestations: boolean;
  readonly bundles: boolean;
  /** The legacy ones among OCI 1.1 referrers too. */
  readonly oci11Referrers?: boolean;
}

/** The wanted queries' discoveries (at once), in this order, each find labelled by its query. */
export async function discoverAll(
  client: RegistryClient,
  wanted: Wanted,
  call: RegistryCall,
  limits: Partial<DiscoveryLimits> = {},
) {
  const { legacySignatures, legacyAttestations, bundles, oci11Referrers, ...where } = wanted;
  const queries = [
    ...(legacySignatures ? [SIGNATURES] : []),
    ...(legacyAttestations ? [ATTESTATIONS] : []),
    ...(bundles ? [BUNDLES] : []),
    ...(oci11Referrers && legacySignatures ? [OCI11_SIGNATURES] : []),
    ...(oci11Referrers && legacyAttestations ? [OCI11_ATTESTATIONS] : []),
  ];
  const found = await Promise.all(
    queries.map(async (query) => ({
      query,
      ...(await discoverArtifacts(client, { ...where, query }, call, limits)),
    })),
  );
  return {
    artifacts: found.flatMap(({ query, artifacts }) =>
      artifacts.map((artifact): StoredArtifact & { query: ArtifactQuery } => ({ query, ...artifact })),
    ),
    truncated: found.flatMap(({ truncated }): Truncation[] => [...truncated]),
    skipped: found.flatMap(({ query, skipped }) =>
      skipped.map((candidate): UnreadableCandidate & { query: ArtifactQuery } => ({ query, ...candidate })),
    ),
  };
}
