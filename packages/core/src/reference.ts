// Container image references, parsed with the grammar the container runtimes use (the
// distribution/reference grammar that containerd and the kubelet apply), and named the way
// sigstore policy-controller names them for policy globs (`index.docker.io/library/...`).
import { InvalidReferenceError, quote } from './errors.js';

/** A parsed, normalized image reference. */
export interface ImageReference {
  /** The reference exactly as written in the object. */
  readonly original: string;
  /**
   * Lowercase `host[:port]` without the default `:443`; `index.docker.io` for Docker Hub
   * (`docker.io`, `registry-1.docker.io`, or no host at all).
   */
  readonly registry: string;
  /** Repository path, with `library/` for Docker Hub official images: `library/alpine`. */
  readonly repository: string;
  /** The tag as written; `undefined` when none was written. */
  readonly tag: string | undefined;
  /** `algorithm:hex`, when written: `sha256:...`. */
  readonly digest: string | undefined;
  /** `registry/repository[:tag][@digest]`, with `:latest` when there is neither tag nor digest. */
  readonly normalized: string;
  /**
   * The name policy globs are matched against, as policy-controller does: the digest form
   * `registry/repository@digest` when there is a digest (a tag next to it is dropped), otherwise
   * `registry/repository:tag` (`:latest` by default).
   */
  readonly matchName: string;
}

export const DOCKER_HUB = 'index.docker.io';
/** The names Docker Hub goes by; the runtimes pull all of them from the same place. */
const DOCKER_HUB_ALIASES: ReadonlySet<string> = new Set(['docker.io', DOCKER_HUB, 'registry-1.docker.io']);
const MAX_REFERENCE_LENGTH = 4096;
const MAX_NAME_LENGTH = 255;

const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const PATH = new RegExp(`^${PATH_COMPONENT}(?:/${PATH_COMPONENT})*$`);
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const HOST = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])`;
const DOMAIN = new RegExp(`^${HOST}(?::[0-9]+)?$`);
const TAG = /^\w[\w.-]{0,127}$/;
const LOWER_HEX = /^[a-f0-9]+$/;
const IMAGE_ID = /^[a-f0-9]{64}$/;
/** The digest algorithms registries and runtimes accept, with their hex lengths. */
const DIGEST_HEX_LENGTH: Readonly<Record<string, number>> = { sha256: 64, sha384: 96, sha512: 128 };

/**
 * Parses and normalizes an image reference: `alpine` -> `index.docker.io/library/alpine:latest`,
 * `docker.io/x/y` -> `index.docker.io/x/y:latest`, `localhost:5000/app@sha256:...`. The first path
 * segment is a registry host when it contains `.` or `:`, is `localhost`, or has an uppercase
 * letter, as for the runtimes. Throws {@link InvalidReferenceError}.
 */
export function parseReference(reference: string): ImageReference {
  const fail = (problem: string): never => {
    throw new InvalidReferenceError(reference, problem);
  };
  if (reference === '') fail('must not be empty');
  if (reference.length > MAX_REFERENCE_LENGTH) fail(`longer than ${MAX_REFERENCE_LENGTH} characters`);
  if (IMAGE_ID.test(reference)) fail('a 64-character hexadecimal string is an image ID, not a reference');
  let rest = reference;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at !== -1) {
    digest = checkDigest(rest.slice(at + 1), fail);
    rest = rest.slice(0, at);
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    if (!TAG.test(tag)) fail(`invalid tag ${quote(tag)}`);
    rest = rest.slice(0, colon);
  }
  const { registry, repository } = splitName(rest, fail);
  const base = `${registry}/${repository}`;
  return {
    original: reference,
    registry,
    repository,
    tag,
    digest,
    normalized: normalizedOf(base, tag, digest),
    matchName: digest === undefined ? `${base}:${tag ?? 'latest'}` : `${base}@${digest}`,
  };
}

/**
 * The reference pinned to a digest, keeping what was written: `alpine:3.20` ->
 * `alpine:3.20@sha256:...`. Throws {@link InvalidReferenceError} when the result would not parse
 * (a malformed digest, or a reference that already has one).
 */
export function withDigest(reference: string, digest: string): string {
  const pinned = `${reference}@${digest}`;
  parseReference(pinned);
  return pinned;
}

function splitName(name: string, fail: (problem: string) => never): { registry: string; repository: string } {
  if (name === '') fail('repository name must not be empty');
  const slash = name.indexOf('/');
  const first = slash === -1 ? '' : name.slice(0, slash);
  const hasHost =
    slash !== -1 && (/[.:]/.test(first) || first === 'localhost' || first !== first.toLowerCase());
  const host = hasHost ? first : DOCKER_HUB;
  let repository = hasHost ? name.slice(slash + 1) : name;
  if (!DOMAIN.test(host)) fail(`invalid registry host ${quote(host)}`);
  if (repository !== repository.toLowerCase()) fail(`repository name ${quote(repository)} must be lowercase`);
  if (!PATH.test(repository)) fail(`invalid repository name ${quote(repository)}`);
  // Host names are case-insensitive and `:443` is the port HTTPS uses anyway: one spelling per
  // registry keeps a policy glob from being sidestepped by another way of writing it.
  let registry = host.toLowerCase().replace(/:443$/, '');
  if (DOCKER_HUB_ALIASES.has(registry)) {
    registry = DOCKER_HUB;
    if (!repository.includes('/')) repository = `library/${repository}`;
  }
  if (registry.length + 1 + repository.length > MAX_NAME_LENGTH) {
    fail(`name longer than ${MAX_NAME_LENGTH} characters`);
  }
  return { registry, repository };
}

function checkDigest(digest: string, fail: (problem: string) => never): string {
  const colon = digest.indexOf(':');
  if (colon === -1) fail(`invalid digest ${quote(digest)}: expected algorithm:hex`);
  const algorithm = digest.slice(0, colon);
  const hex = digest.slice(colon + 1);
  const length = Object.hasOwn(DIGEST_HEX_LENGTH, algorithm) ? DIGEST_HEX_LENGTH[algorithm] : undefined;
  if (length === undefined) return fail(`unsupported digest algorithm ${quote(algorithm)}`);
  if (hex.length !== length || !LOWER_HEX.test(hex)) {
    fail(`${algorithm} digest must be ${length} lowercase hexadecimal characters`);
  }
  return digest;
}

function normalizedOf(base: string, tag: string | undefined, digest: string | undefined): string {
  if (digest === undefined) return `${base}:${tag ?? 'latest'}`;
  return tag === undefined ? `${base}@${digest}` : `${base}:${tag}@${digest}`;
}
