// The registry client: tag -> digest, manifests and blobs verified against their digests, and the
// referrers of a manifest (OCI 1.1 referrers API, else the `sha256-<hex>` fallback tag). Every
// method takes a `RegistryCall` (signal + deadline) and throws only `RegistryError`.

import { AuthCache, type AuthCacheOptions, Authenticator } from './auth.js';
import type { CredentialProvider } from './cloud/provider.js';
import type { RegistryCall } from './deadline.js';
import { digestOf, digestTag, isDigest, verifyDigest } from './digest.js';
import { apiUrl, checkDigest, checkReference, isTag } from './endpoint.js';
import { RegistryError, type RegistryErrorContext } from './errors.js';
import { type HttpResponse, HttpTransport, type HttpTransportOptions } from './http.js';
import type { CredentialSource } from './keychain.js';
import { nextLink } from './link.js';
import { type Descriptor, type Manifest, parseManifest } from './manifest.js';
import { essence, MANIFEST_ACCEPT, OCI_INDEX } from './media-types.js';
import type { RepositoryRef } from './references.js';

/** A tagged image: what `resolveDigest` turns into a digest. */
export interface TagRef extends RepositoryRef {
  readonly tag: string;
}

export interface RegistryLimits {
  /** Largest manifest or referrers page read (default 4 MiB, what distribution itself accepts). */
  readonly manifestMaxBytes: number;
  /** Largest blob `getBlob` reads unless told otherwise (default 16 MiB). */
  readonly blobMaxBytes: number;
  /** Referrers API pages followed (default 8). */
  readonly referrersMaxPages: number;
  /** Referrer descriptors kept (default 1000); more sets `truncated`. */
  readonly referrersMaxDescriptors: number;
}

export const DEFAULT_REGISTRY_LIMITS: RegistryLimits = {
  manifestMaxBytes: 4 * 1024 * 1024,
  blobMaxBytes: 16 * 1024 * 1024,
  referrersMaxPages: 8,
  referrersMaxDescriptors: 1000,
};

export interface RegistryClientOptions extends HttpTransportOptions {
  /** Where credentials come from (a `Keychain`); anonymous when absent. */
  readonly credentials?: CredentialSource;
  /**
   * Cloud credentials (ECR, GCP, ACR), asked when no pull secret matches, each for its own
   * registries only. Kept by `withCredentials`.
   */
  readonly credentialProviders?: readonly CredentialProvider[];
  /** Shared token cache; one per client when absent. */
  readonly authCache?: AuthCache;
  readonly authCacheOptions?: AuthCacheOptions;
  /** A transport to share (built from the other options when absent). */
  readonly transport?: HttpTransport;
  readonly limits?: Partial<RegistryLimits>;
}

/** A manifest whose bytes were checked against its digest. */
export interface FetchedManifest {
  /** The digest asked for, or (by tag) the sha256 of the bytes. */
  readonly digest: string;
  readonly mediaType: string;
  /** The exact bytes (the digest's preimage). */
  readonly bytes: Uint8Array;
  readonly manifest: Manifest;
}

export interface Referrers {
  readonly descriptors: readonly Descriptor[];
  /** Which mechanism answered. */
  readonly via: 'referrers-api' | 'fallback-tag';
  /** True when pages or descriptors beyond the limits were left unread. */
  readonly truncated: boolean;
}

export class RegistryClient {
  readonly transport: HttpTransport;
  readonly authCache: AuthCache;
  readonly limits: RegistryLimits;
  readonly #options: RegistryClientOptions;
  readonly #auth: Authenticator;

  constructor(options: RegistryClientOptions = {}) {
    this.#options = options;
    this.transport = options.transport ?? new HttpTransport(options);
    this.authCache = options.authCache ?? new AuthCache(this.transport.clock, options.authCacheOptions);
    this.limits = { ...DEFAULT_REGISTRY_LIMITS, ...options.limits };
    this.#auth = new Authenticator(
      this.transport,
      this.authCache,
      options.credentials,
      options.credentialProviders,
    );
  }

  /** A client with other credentials (one admission's pull secrets) sharing transport and token cache. */
  withCredentials(credentials: CredentialSource | undefined): RegistryClient {
    const { credentials: _previous, ...rest } = this.#options;
    return new RegistryClient({
      ...rest,
      ...(credentials === undefined ? {} : { credentials }),
      transport: this.transport,
      authCache: this.authCache,
    });
  }

  /** A deadline `ms` from now on this client's clock. */
  deadlineIn(ms: number): number {
    return this.transport.clock.now() + ms;
  }

  /**
   * The digest a tag points at: `HEAD` and its `Docker-Content-Digest`, else a `GET` whose bytes
   * are hashed. Throws `NOT_FOUND` for an unknown tag.
   */
  async resolveDigest(ref: TagRef, call: RegistryCall): Promise<string> {
    if (!isTag(ref.tag)) {
      throw new RegistryError('INVALID_REQUEST', ref, `${JSON.stringify(ref.tag)} is not a tag`);
    }
    const head = await this.#send(ref, 'HEAD', `manifests/${ref.tag}`, MANIFEST_ACCEPT, 0, call);
    const announced = head.headers.get('docker-content-digest');
    if (head.status === 200 && announced !== null && isDigest(announced)) return announced;
    if (head.status === 404) fail(head, ref, `tag ${ref.tag}`);
    return (await this.getManifest(ref, ref.tag, call)).digest;
  }

  /**
   * A manifest or index by digest or tag. By digest, the bytes must hash to it; by tag, they must
   * hash to the announced `Docker-Content-Digest` (when there is one) and the sha256 is returned.
   */
  async getManifest(
    repository: RepositoryRef,
    reference: string,
    call: RegistryCall,
  ): Promise<FetchedManifest> {
    checkReference(repository, reference);
    const what = `manifest ${reference}`;
    const response = await this.#send(
      repository,
      'GET',
      `manifests/${reference}`,
      MANIFEST_ACCEPT,
      this.limits.manifestMaxBytes,
      call,
    );
    if (response.status !== 200) fail(response, repository, what);
    const bytes = response.body;
    const announced = response.headers.get('docker-content-digest');
    const expected = isDigest(reference)
      ? reference
      : announced !== null && isDigest(announced)
        ? announced
        : undefined;
    if (expected !== undefined) verifyDigest(bytes, expected, repository, what);
    const manifest = parseManifest(bytes, response.headers.get('content-type'), repository, what);
    const digest = isDigest(reference) ? reference : digestOf(bytes);
    return { digest, mediaType: manifest.mediaType, bytes, manifest };
  }

  /** A blob, whose bytes must hash to `digest`; `maxBytes` overrides the client's blob cap. */
  async getBlob(
    repository: RepositoryRef,
    digest: string,
    call: RegistryCall,
    options: { readonly maxBytes?: number } = {},
  ): Promise<Uint8Array> {
    checkDigest(repository, digest);
    const maxBytes = options.maxBytes ?? this.limits.blobMaxBytes;
    const response = await this.#send(repository, 'GET', `blobs/${digest}`, '*/*', maxBytes, call);
    if (response.status !== 200) fail(response, repository, `blob ${digest}`);
    verifyDigest(response.body, digest, repository, `blob ${digest}`);
    return response.body;
  }

  /**
   * The referrers of `digest`, optionally only those of one `artifactType` (filtered here too:
   * registries may ignore the filter). Uses the referrers API, following `Link: rel="next"` pages;
   * when the registry has none (anything but 200 with an OCI index), the `sha256-<hex>` tag.
   */
  async listReferrers(
    repository: RepositoryRef,
    digest: string,
    call: RegistryCall,
    options: { readonly artifactType?: string } = {},
  ): Promise<Referrers> {
    checkDigest(repository, digest);
    const wanted = (descriptor: Descriptor) =>
      options.artifactType === undefined || descriptor.artifactType === options.artifactType;
    const query =
      options.artifactType === undefined ? '' : `?artifactType=${encodeURIComponent(options.artifactType)}`;
    let url = apiUrl(repository, this.#insecure(repository), `referrers/${digest}${query}`);
    const visited = new Set<string>();
    const found: Descriptor[] = [];
    for (let page = 1; ; page++) {
      visited.add(url.href);
      const response = await this.#auth.send(
        this.#request(repository, 'GET', url, OCI_INDEX, this.limits.manifestMaxBytes),
        repository,
        call,
      );
      const isIndex = response.status === 200 && essence(response.headers.get('content-type')) === OCI_INDEX;
      if (page === 1 && !isIndex) return this.#fallbackReferrers(repository, digest, wanted, call);
      if (response.status !== 200) fail(response, repository, `referrers of ${digest}`);
      found.push(...this.#referrersPage(response, repository, digest).filter(wanted));
      if (found.length > this.limits.referrersMaxDescriptors) {
        return {
          descriptors: found.slice(0, this.limits.referrersMaxDescriptors),
          via: 'referrers-api',
          truncated: true,
        };
      }
      const next = nextLink(response.headers.get('link'), url, repository);
      if (next === undefined) return { descriptors: found, via: 'referrers-api', truncated: false };
      if (next.origin !== url.origin || visited.has(next.href)) {
        throw new RegistryError(
          'MALFORMED',
          repository,
          `the referrers of ${digest} link to another host or back to a page already read`,
        );
      }
      if (page >= this.limits.referrersMaxPages)
        return { descriptors: found, via: 'referrers-api', truncated: true };
      url = next;
    }
  }

  #referrersPage(response: HttpResponse, repository: RepositoryRef, digest: string): readonly Descriptor[] {
    const what = `referrers of ${digest}`;
    const index = parseManifest(response.body, response.headers.get('content-type'), repository, what);
    if (index.kind !== 'index')
      throw new RegistryError('MALFORMED', repository, `${what}: the page is not an index`);
    return index.manifests;
  }

  async #fallbackReferrers(
    repository: RepositoryRef,
    digest: string,
    wanted: (descriptor: Descriptor) => boolean,
    call: RegistryCall,
  ): Promise<Referrers> {
    const tag = digestTag(digest);
    let fetched: FetchedManifest;
    try {
      fetched = await this.getManifest(repository, tag, call);
    } catch (error) {
      if (error instanceof RegistryError && error.code === 'NOT_FOUND') {
        return { descriptors: [], via: 'fallback-tag', truncated: false };
      }
      throw error;
    }
    if (fetched.manifest.kind !== 'index') {
      throw new RegistryError('MALFORMED', repository, `the referrers tag ${tag} is not an index`);
    }
    const matching = fetched.manifest.manifests.filter(wanted);
    const max = this.limits.referrersMaxDescriptors;
    return { descriptors: matching.slice(0, max), via: 'fallback-tag', truncated: matching.length > max };
  }

  #insecure(repository: RepositoryRef): boolean {
    return this.transport.isInsecure(repository.registry);
  }

  #request(repository: RepositoryRef, method: 'GET' | 'HEAD', url: URL, accept: string, maxBytes: number) {
    const context: RegistryErrorContext = {
      registry: repository.registry,
      repository: repository.repository,
    };
    return { method, url, headers: { accept }, maxBytes, context };
  }

  #send(
    repository: RepositoryRef,
    method: 'GET' | 'HEAD',
    path: string,
    accept: string,
    maxBytes: number,
    call: RegistryCall,
  ): Promise<HttpResponse> {
    const url = apiUrl(repository, this.#insecure(repository), path);
    return this.#auth.send(this.#request(repository, method, url, accept, maxBytes), repository, call);
  }
}

/** The error for a response that is not what was asked for. */
function fail(response: HttpResponse, repository: RepositoryRef, what: string): never {
  const context = {
    registry: repository.registry,
    repository: repository.repository,
    status: response.status,
  };
  const codes = errorCodes(response.body);
  const detail = codes.length === 0 ? '' : ` (${codes.join(', ')})`;
  if (response.status === 404) throw new RegistryError('NOT_FOUND', context, `${what} not found${detail}`);
  if (response.status === 403)
    throw new RegistryError('UNAUTHORIZED', context, `access to ${what} denied${detail}`);
  throw new RegistryError(
    'UNEXPECTED_STATUS',
    context,
    `${what}: unexpected status ${response.status}${detail}`,
  );
}

/** The `code`s of a distribution error body (`{"errors":[{"code":"MANIFEST_UNKNOWN",...}]}`). */
function errorCodes(body: Uint8Array): string[] {
  try {
    const json = JSON.parse(Buffer.from(body).toString('utf8')) as { errors?: { code?: unknown }[] };
    return (json.errors ?? [])
      .map((error) => error.code)
      .filter((code): code is string => typeof code === 'string' && /^[A-Z_]{1,64}$/.test(code))
      .slice(0, 5);
  } catch {
    return [];
  }
}
