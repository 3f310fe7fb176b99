// What the registry client is asked about: a repository, and an image in it by digest.

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
