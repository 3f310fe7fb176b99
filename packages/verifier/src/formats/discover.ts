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
import type { DiscoverySettings, Evidence, FormatQuery, SignatureFormat } from './format.js';

/** Where an authority's artifacts are stored: one `source[]` entry (the image's repository when none). */
export interface ArtifactLocation {
  /** `source[].oci`, when not the image's own repository. */
  readonly signatureRepository: RepositoryRef | undefined;
  /** `source[].tagPrefix`. */
  readonly tagPrefix: string | undefined;
}

/** Where, what and how to look: an authority's sources, the formats to read, its evidence. */
export interface Search {
  readonly sources: readonly ArtifactLocation[];
  readonly formats: readonly SignatureFormat[];
  readonly evidence: Evidence;
  readonly settings: DiscoverySettings;
}

/** The registry requests of `search` next to `image`: per source, per format query. */
export function discoveryRequests(search: Search, image: DigestRef): DiscoveryRequest[] {
  return plan(search, image).map(({ request }) => request);
}

/**
 * What `search` finds next to `image`: per source, the artifacts its format queries found, then
 * the candidates they could not read. Throws what the registry throws.
 */
export async function findArtifacts(
  discovery: ArtifactDiscovery,
  search: Search,
  image: DigestRef,
  call: RegistryCall,
): Promise<DiscoveredArtifact[]> {
  const perSource = await Promise.all(
    search.sources.map(async (source) => {
      const finds = await Promise.all(
        plan({ ...search, sources: [source] }, image).map(async ({ request, read }) => ({
          read,
          found: await discovery.discover(request, call),
        })),
      );
      return [
        ...finds.flatMap(({ read, found }) => found.artifacts.map((stored) => read.read(stored))),
        // Unusable candidates go on too: the authority reports them among what it rejected.
        ...finds.flatMap(({ read, found }) =>
          found.skipped.map(
            ({ source: at, reason }): DiscoveredArtifact => ({
              format: 'unreadable',
              source: at,
              listedAs: read.encoding,
              reason,
            }),
          ),
        ),
      ];
    }),
  );
  return perSource.flat();
}

interface Planned {
  readonly request: DiscoveryRequest;
  readonly read: FormatQuery;
}

function plan({ sources, formats, evidence, settings }: Search, image: DigestRef): Planned[] {
  return sources.flatMap((source) =>
    formats.flatMap((format) =>
      format.queries(evidence, settings).map((read) => ({
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
