// What an authority's signature formats find next to an image: one registry request per source
// (`source[]`) and format query, run through the image's shared `ArtifactDiscovery`, each find
// read by the format that asked for it.
import type {
  ArtifactDiscovery,
  DigestRef,
  DiscoveryRequest,
  RegistryCall,
  RepositoryRef,
} from '@signet/registry';
import type { DiscoveredArtifact } from '../artifacts.js';
import type { Evidence, FormatQuery, SignatureFormat } from './format.js';

/** Where an authority's artifacts are stored: one `source[]` entry (the image's repository when none). */
export interface ArtifactLocation {
  /** `source[].oci`, when not the image's own repository. */
  readonly signatureRepository: RepositoryRef | undefined;
  /** `source[].tagPrefix`. */
  readonly tagPrefix: string | undefined;
}

/** The registry requests that find `evidence` in `formats` next to `image`: per source, per format query. */
export function discoveryRequests(
  sources: readonly ArtifactLocation[],
  formats: readonly SignatureFormat[],
  evidence: Evidence,
  image: DigestRef,
): DiscoveryRequest[] {
  return plan(sources, formats, evidence, image).map(({ request }) => request);
}

/**
 * What `formats` hand over for an authority with `sources` looking for `evidence`: found artifacts
 * and unreadable candidates, per source, format and query in that order. Throws what the registry
 * throws.
 */
export async function findArtifacts(
  discovery: ArtifactDiscovery,
  sources: readonly ArtifactLocation[],
  formats: readonly SignatureFormat[],
  evidence: Evidence,
  image: DigestRef,
  call: RegistryCall,
): Promise<DiscoveredArtifact[]> {
  const lists = await Promise.all(
    plan(sources, formats, evidence, image).map(async ({ request, read }) => {
      const found = await discovery.discover(request, call);
      return [
        ...found.artifacts.map((stored) => read.read(stored)),
        ...found.skipped.map(
          ({ source, reason }): DiscoveredArtifact => ({
            format: 'unreadable',
            source,
            listedAs: read.encoding,
            reason,
          }),
        ),
      ];
    }),
  );
  return lists.flat();
}

interface Planned {
  readonly request: DiscoveryRequest;
  readonly read: FormatQuery;
}

function plan(
  sources: readonly ArtifactLocation[],
  formats: readonly SignatureFormat[],
  evidence: Evidence,
  image: DigestRef,
): Planned[] {
  return sources.flatMap((source) =>
    formats.flatMap((format) =>
      format.queries(evidence).map((read) => ({
        read,
        request: {
          image,
          ...(source.signatureRepository === undefined
            ? {}
            : { signatureRepository: source.signatureRepository }),
          ...(source.tagPrefix === undefined ? {} : { tagPrefix: source.tagPrefix }),
          query: read.query,
        },
      })),
    ),
  );
}
