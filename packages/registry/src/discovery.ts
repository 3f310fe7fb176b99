// Finding what is stored next to an image: the layers of a digest tag (cosign's
// `sha256-<hex>.sig`) or the referrers of an artifact type, as the caller's query says. Nothing
// here decides validity or knows a signature format; everything handed over is digest-verified
// bytes. "Nothing there" (a missing tag) is an empty result; a registry failure is a
// `RegistryError`. One unusable candidate (oversized, tampered, missing, malformed) is skipped and
// reported, never allowed to hide the good one beside it; how much is read is bounded by count
// and bytes, per query.
import type {
  ArtifactQuery,
  ArtifactTypeMatch,
  DigestTagQuery,
  DiscoveryRequest,
  ListedAnnotationMatch,
  ReferrersQuery,
  StoredArtifact,
  UnreadableCandidate,
} from './artifacts.js';
import type { FetchedManifest, Referrers, RegistryClient } from './client.js';
import type { RegistryCall } from './deadline.js';
import { digestTag } from './digest.js';
import { isTag } from './endpoint.js';
import { RegistryError } from './errors.js';
import type { Descriptor } from './manifest.js';
import type { RepositoryRef } from './references.js';

/** The client methods discovery uses. */
export type ArtifactStore = Pick<RegistryClient, 'getManifest' | 'getBlob' | 'listReferrers'>;

export interface DiscoveryLimits {
  /** Layers read per digest tag (default 256). */
  readonly maxLayers: number;
  /** Referrers read per query (default 64). */
  readonly maxReferrers: number;
  /** Largest artifact blob (default 1 MiB; signatures and bundles are a few KiB). */
  readonly maxArtifactBytes: number;
  /** Blob bytes read per query (default 8 MiB). */
  readonly maxTotalBytes: number;
  /** Blobs and referrer manifests read at a time (default 8). */
  readonly concurrency: number;
}

export const DEFAULT_DISCOVERY_LIMITS: DiscoveryLimits = {
  maxLayers: 256,
  maxReferrers: 64,
  maxArtifactBytes: 1024 * 1024,
  maxTotalBytes: 8 * 1024 * 1024,
  concurrency: 8,
};

/** Candidates that were left unread because there were more than a limit allows. */
export interface Truncation {
  /** `registry/repo:sha256-<hex>.sig`, or `registry/repo@sha256:... referrers`. */
  readonly source: string;
  /** The query whose candidates were cut short. */
  readonly query: ArtifactQuery;
  /** Which limit: the number of candidates, or the bytes read. */
  readonly by: 'count' | 'bytes';
  readonly limit: number;
  /** How many candidates there were; `undefined` when the registry's pages were not all read. */
  readonly found: number | undefined;
}

export interface Discovery {
  readonly artifacts: readonly StoredArtifact[];
  readonly truncated: readonly Truncation[];
  readonly skipped: readonly UnreadableCandidate[];
}

/**
 * The discoveries of one image verification: each distinct request is read once however many
 * callers ask for it, and the referrers of a repository and digest are listed once (and each
 * manifest by digest read once) for every query that reads them. Failures are shared too, as the
 * answer to that request.
 */
export class ArtifactDiscovery {
  readonly #store: ArtifactStore;
  readonly #limits: DiscoveryLimits;
  readonly #discoveries = new Map<string, Promise<Discovery>>();
  readonly #referrers = new Map<string, Promise<Referrers>>();
  readonly #manifests = new Map<string, Promise<FetchedManifest>>();

  constructor(store: ArtifactStore, limits: Partial<DiscoveryLimits> = {}) {
    this.#limits = { ...DEFAULT_DISCOVERY_LIMITS, ...limits };
    this.#store = {
      // A manifest by digest is the same for every query that reads it (a referrer listed for
      // signatures and for attestations, where the listing does not say which it is): read once.
      getManifest: (repository, reference, call) => {
        if (isTag(reference)) return store.getManifest(repository, reference, call);
        const key = `${repository.registry}/${repository.repository}@${reference}`;
        let fetched = this.#manifests.get(key);
        if (fetched === undefined) {
          fetched = store.getManifest(repository, reference, call);
          this.#manifests.set(key, fetched);
        }
        return fetched;
      },
      getBlob: (repository, digest, call, options) => store.getBlob(repository, digest, call, options),
      listReferrers: (repository, digest, call) => {
        const key = `${repository.registry}/${repository.repository}@${digest}`;
        let listed = this.#referrers.get(key);
        if (listed === undefined) {
          listed = store.listReferrers(repository, digest, call);
          this.#referrers.set(key, listed);
        }
        return listed;
      },
    };
  }

  /** What `request` finds, read under `call` by whoever asks first. */
  discover(request: DiscoveryRequest, call: RegistryCall): Promise<Discovery> {
    const key = JSON.stringify([
      request.image,
      request.signatureRepository ?? null,
      request.tagPrefix ?? null,
      request.query,
    ]);
    let found = this.#discoveries.get(key);
    if (found === undefined) {
      found = discover(this.#store, request, call, this.#limits);
      this.#discoveries.set(key, found);
    }
    return found;
  }
}

/** What `request` finds next to `request.image`, in the signature repository when one is given. */
export function discoverArtifacts(
  store: ArtifactStore,
  request: DiscoveryRequest,
  call: RegistryCall,
  limits: Partial<DiscoveryLimits> = {},
): Promise<Discovery> {
  return new ArtifactDiscovery(store, limits).discover(request, call);
}

/** One discovery: where it reads, with what, within which limits, and what it noted on the way. */
interface Scan {
  readonly client: ArtifactStore;
  /** The repository holding the artifacts: `source.oci`, or the image's own. */
  readonly store: RepositoryRef;
  readonly call: RegistryCall;
  readonly limits: DiscoveryLimits;
  readonly truncated: Truncation[];
  readonly skipped: UnreadableCandidate[];
}

async function discover(
  client: ArtifactStore,
  request: DiscoveryRequest,
  call: RegistryCall,
  limits: DiscoveryLimits,
): Promise<Discovery> {
  const store: RepositoryRef = request.signatureRepository ?? request.image;
  const scan: Scan = { client, store, call, limits, truncated: [], skipped: [] };
  const { query } = request;
  const artifacts =
    query.kind === 'digest-tag'
      ? await taggedLayers(scan, query, digestTagOf(request, store, query))
      : await referrerArtifacts(scan, query, request.image.digest);
  return { artifacts, truncated: scan.truncated, skipped: scan.skipped };
}

/** `<tagPrefix>sha256-<hex>.<suffix>`, or `INVALID_REQUEST` when that is not a tag. */
function digestTagOf(request: DiscoveryRequest, store: RepositoryRef, query: DigestTagQuery): string {
  const tag = `${request.tagPrefix ?? ''}${digestTag(request.image.digest)}.${query.suffix}`;
  if (!isTag(tag)) {
    throw new RegistryError(
      'INVALID_REQUEST',
      store,
      `tag prefix ${JSON.stringify(request.tagPrefix)} makes an invalid tag`,
    );
  }
  return tag;
}

/** The verified blobs of the `query.mediaType` layers of the manifest at `tag` (none when the tag is absent). */
async function taggedLayers(scan: Scan, query: DigestTagQuery, tag: string): Promise<StoredArtifact[]> {
  const { store, limits } = scan;
  const source = `${store.registry}/${store.repository}:${tag}`;
  const fetched = await manifestOrNothing(scan, tag);
  if (fetched === undefined) return [];
  if (fetched.manifest.kind !== 'manifest') {
    throw new RegistryError('MALFORMED', store, `${tag} is an index, not an image manifest`);
  }
  const manifestAnnotations = fetched.manifest.annotations;
  const candidates = fetched.manifest.layers.filter((layer) => layer.mediaType === query.mediaType);
  if (candidates.length > limits.maxLayers) {
    scan.truncated.push({ source, query, by: 'count', limit: limits.maxLayers, found: candidates.length });
  }
  const budget = new ByteBudget(limits.maxTotalBytes);
  const wanted = candidates.slice(0, limits.maxLayers).map((layer, index) => ({ layer, index }));
  const read = await mapLimited(wanted, limits.concurrency, async ({ layer, index }) => {
    const at = `${source} layer ${index}`;
    const bytes = await readCandidate(scan, at, layer, budget);
    return bytes === undefined
      ? undefined
      : {
          source: at,
          bytes,
          annotations: layer.annotations,
          manifestAnnotations,
          artifactType: layer.mediaType,
        };
  });
  if (budget.exceeded) {
    scan.truncated.push({
      source,
      query,
      by: 'bytes',
      limit: limits.maxTotalBytes,
      found: candidates.length,
    });
  }
  return read.filter((content) => content !== undefined);
}

async function referrerArtifacts(
  scan: Scan,
  query: ReferrersQuery,
  digest: string,
): Promise<StoredArtifact[]> {
  const { store, limits } = scan;
  const referrers = await scan.client.listReferrers(store, digest, scan.call);
  const listed = (descriptor: Descriptor) =>
    matchesType(descriptor.artifactType, query.artifactType) && !skipped(descriptor, query.skipListed);
  const candidates = unique(referrers.descriptors.filter(listed));
  const source = `${store.registry}/${store.repository}@${digest} referrers`;
  if (referrers.truncated || candidates.length > limits.maxReferrers) {
    scan.truncated.push({
      source,
      query,
      by: 'count',
      limit: limits.maxReferrers,
      found: referrers.truncated ? undefined : candidates.length,
    });
  }
  const budget = new ByteBudget(limits.maxTotalBytes);
  const artifacts = await mapLimited(
    candidates.slice(0, limits.maxReferrers),
    limits.concurrency,
    (descriptor) => referrerFinds(scan, query, digest, descriptor, budget),
  );
  if (budget.exceeded) {
    scan.truncated.push({
      source,
      query,
      by: 'bytes',
      limit: limits.maxTotalBytes,
      found: candidates.length,
    });
  }
  return artifacts.flat();
}

/** Whether a listed or stated artifactType is what the query reads. */
function matchesType(artifactType: string | undefined, match: ArtifactTypeMatch): boolean {
  const type = artifactType ?? '';
  if ('startsWith' in match) return artifactType !== undefined && type.startsWith(match.startsWith);
  if ('equals' in match) return type === match.equals;
  return type.includes(match.includes);
}

/** Whether the annotations of a referrer (listed, or of its manifest) say it is not what the query reads. */
function skipped(descriptor: Descriptor, skip: ListedAnnotationMatch | undefined): boolean {
  const value = skip === undefined ? undefined : descriptor.annotations[skip.annotation];
  if (skip === undefined || value === undefined) return false;
  return 'equals' in skip ? value === skip.equals : value !== skip.differsFrom;
}

/** One referrer's artifacts; none (recorded as skipped) when the referrer is not usable. */
async function referrerFinds(
  scan: Scan,
  query: ReferrersQuery,
  subject: string,
  descriptor: Descriptor,
  budget: ByteBudget,
): Promise<StoredArtifact[]> {
  const source = `${scan.store.registry}/${scan.store.repository}@${descriptor.digest}`;
  const skip = (reason: string): StoredArtifact[] => {
    scan.skipped.push({ source, reason });
    return [];
  };
  let fetched: FetchedManifest | undefined;
  try {
    fetched = await manifestOrNothing(scan, descriptor.digest);
  } catch (error) {
    if (!isContentProblem(error)) throw error;
    return skip(`the referrer manifest is unusable: ${error.problem}`);
  }
  if (fetched === undefined) return skip('the referrer manifest is listed but does not exist');
  const manifest = fetched.manifest;
  if (manifest.kind !== 'manifest') return skip('the referrer is an index, not an image manifest');
  const artifactType = manifest.artifactType ?? descriptor.artifactType ?? '';
  if (query.confirmedAs !== undefined && !matchesType(artifactType, query.artifactType)) {
    return skip(`the referrer's artifactType is ${JSON.stringify(artifactType)}, not a ${query.confirmedAs}`);
  }
  if (manifest.subject !== undefined && manifest.subject.digest !== subject) {
    return skip(`the referrer's subject is ${manifest.subject.digest}, not ${subject}`);
  }
  const manifestAnnotations = { ...descriptor.annotations, ...manifest.annotations };
  // A listing without annotations (the fallback tag's, as cosign writes it) is judged on the manifest.
  if (skipped({ ...descriptor, annotations: manifestAnnotations }, query.skipListed)) return [];
  const stored = (at: string, bytes: Uint8Array, layer: Descriptor): StoredArtifact => ({
    source: at,
    bytes,
    annotations: layer.annotations,
    manifestAnnotations,
    artifactType,
  });
  const pick = query.layers;
  if (pick.pick === 'each') {
    const layers = manifest.layers.filter((layer) => layer.mediaType === pick.mediaType);
    const read = await mapLimited(
      layers.slice(0, scan.limits.maxLayers),
      scan.limits.concurrency,
      async (layer, index) => {
        const at = `${source} layer ${index}`;
        const bytes = await readCandidate(scan, at, layer, budget);
        return bytes === undefined ? undefined : stored(at, bytes, layer);
      },
    );
    return read.filter((artifact) => artifact !== undefined);
  }
  let layer: Descriptor | undefined;
  if (pick.pick === 'first') {
    layer = manifest.layers[0];
    if (layer === undefined) return skip('the referrer has no layers');
  } else {
    const layers = manifest.layers.filter((candidate) =>
      candidate.mediaType.startsWith(pick.mediaTypePrefix),
    );
    layer = layers[0];
    if (layer === undefined || layers.length > 1) {
      return skip(`the referrer has ${layers.length} ${pick.name} layers, not exactly one`);
    }
  }
  const bytes = await readCandidate(scan, source, layer, budget);
  return bytes === undefined ? [] : [stored(source, bytes, layer)];
}

/**
 * The verified blob of one candidate, or `undefined` when it is skipped (over the artifact cap,
 * missing, not matching its digest: recorded with the reason) or left unread (the byte budget is
 * spent). Registry failures (timeouts, 5xx, refused credentials) are thrown: they say nothing
 * about the candidate.
 */
async function readCandidate(
  scan: Scan,
  source: string,
  layer: Descriptor,
  budget: ByteBudget,
): Promise<Uint8Array | undefined> {
  const skip = (reason: string) => {
    scan.skipped.push({ source, reason });
    return undefined;
  };
  const max = scan.limits.maxArtifactBytes;
  if (layer.size > max)
    return skip(`layer ${layer.digest} announces ${layer.size} bytes; the limit is ${max}`);
  if (!budget.take(layer.size)) return undefined;
  try {
    return await readArtifactBlob(scan, layer);
  } catch (error) {
    if (!isContentProblem(error)) throw error;
    return skip(error.problem);
  }
}

async function readArtifactBlob(scan: Scan, layer: Descriptor): Promise<Uint8Array> {
  const max = scan.limits.maxArtifactBytes;
  return scan.client.getBlob(scan.store, layer.digest, scan.call, { maxBytes: max });
}

/** What a candidate's own content can cause: the candidate is unusable, the registry is fine. */
function isContentProblem(error: unknown): error is RegistryError {
  return (
    error instanceof RegistryError &&
    (error.code === 'NOT_FOUND' ||
      error.code === 'TOO_LARGE' ||
      error.code === 'DIGEST_MISMATCH' ||
      error.code === 'MALFORMED')
  );
}

/** Bytes that may still be read; once a candidate does not fit, the rest are left unread. */
class ByteBudget {
  #left: number;
  exceeded = false;

  constructor(total: number) {
    this.#left = total;
  }

  take(bytes: number): boolean {
    if (this.exceeded || bytes > this.#left) {
      this.exceeded = true;
      return false;
    }
    this.#left -= bytes;
    return true;
  }
}

/** `map` with at most `limit` calls running at a time; results in input order. */
async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

async function manifestOrNothing(scan: Scan, reference: string): Promise<FetchedManifest | undefined> {
  try {
    return await scan.client.getManifest(scan.store, reference, scan.call);
  } catch (error) {
    if (error instanceof RegistryError && error.code === 'NOT_FOUND') return undefined;
    throw error;
  }
}

function unique<T extends Descriptor>(descriptors: readonly T[]): T[] {
  const seen = new Set<string>();
  return descriptors.filter((descriptor) => !seen.has(descriptor.digest) && seen.add(descriptor.digest));
}
