// Media types the registry layer reads or asks for. Manifests come in the OCI and Docker schema 2
// flavours (both common: crane and cosign write OCI, docker pushes Docker); schema 1 is refused.

export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
export const DOCKER_MANIFEST_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';

/** The `Accept` header of every manifest request. */
export const MANIFEST_ACCEPT = [OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_MANIFEST_LIST].join(', ');

/** Media types of an image manifest (a config and layers). */
export const IMAGE_MANIFEST_TYPES: ReadonlySet<string> = new Set([OCI_MANIFEST, DOCKER_MANIFEST]);
/** Media types of an index (a list of manifests). */
export const INDEX_TYPES: ReadonlySet<string> = new Set([OCI_INDEX, DOCKER_MANIFEST_LIST]);

/** `type/subtype` of a Content-Type header, lowercased, without parameters. */
export function essence(contentType: string | null): string {
  return (contentType ?? '').replace(/;.*$/s, '').trim().toLowerCase();
}
