// Registry API URLs (distribution spec `/v2/...`), built only from validated parts so that a
// repository or tag taken from a policy or a Secret can never turn into another path or host.

import { isDigest } from './digest.js';
import { RegistryError } from './errors.js';
import type { RepositoryRef } from './references.js';

const HOST =
  /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[a-f0-9:.]+\])(?::\d{1,5})?$/i;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const REPOSITORY = new RegExp(`^${PATH_COMPONENT}(?:/${PATH_COMPONENT})*$`);
const TAG = /^\w[\w.-]{0,127}$/;

/** Docker Hub's registry name in references and the host that serves its API. */
const DOCKER_HUB_API: Readonly<Record<string, string>> = {
  'index.docker.io': 'registry-1.docker.io',
  'docker.io': 'registry-1.docker.io',
};

export function isTag(value: string): boolean {
  return TAG.test(value);
}

/** Throws `INVALID_REQUEST` unless registry and repository are well-formed. */
export function checkRepository(ref: RepositoryRef): void {
  if (!HOST.test(ref.registry)) {
    throw new RegistryError('INVALID_REQUEST', ref, `${JSON.stringify(ref.registry)} is not a registry host`);
  }
  if (ref.repository.length > 255 || !REPOSITORY.test(ref.repository)) {
    throw new RegistryError(
      'INVALID_REQUEST',
      ref,
      `${JSON.stringify(ref.repository)} is not a repository name`,
    );
  }
}

/** Throws `INVALID_REQUEST` unless `reference` is a tag or a digest. */
export function checkReference(ref: RepositoryRef, reference: string): void {
  if (!isTag(reference) && !isDigest(reference)) {
    throw new RegistryError(
      'INVALID_REQUEST',
      ref,
      `${JSON.stringify(reference)} is neither a tag nor a digest`,
    );
  }
}

/** Throws `INVALID_REQUEST` unless `digest` is a digest. */
export function checkDigest(ref: RepositoryRef, digest: string): void {
  if (!isDigest(digest)) {
    throw new RegistryError('INVALID_REQUEST', ref, `${JSON.stringify(digest)} is not a digest`);
  }
}

/** `https://host/v2/<repository>/<path>`, or `http://` for a registry listed as insecure. */
export function apiUrl(ref: RepositoryRef, insecure: boolean, path: string): URL {
  checkRepository(ref);
  const host = DOCKER_HUB_API[ref.registry.toLowerCase()] ?? ref.registry;
  return new URL(`${insecure ? 'http' : 'https'}://${host}/v2/${ref.repository}/${path}`);
}
