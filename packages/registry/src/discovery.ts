// Finding what is stored next to an image for the signature layer to judge: legacy cosign
// signatures (`sha256-<hex>.sig`), legacy attestations (`.att`) and Sigstore bundles attached as
// referrers. Nothing here decides validity; everything handed over is digest-verified bytes.
// "Nothing there" (a missing tag) is an empty result; a registry failure is a `RegistryError`.
// One unusable candidate (oversized, tampered, missing, malformed) is skipped and reported, never
// allowed to hide the valid signature beside it; how much is read is bounded by count and bytes.
import type {
  BundleArtifact,
  DiscoveryRequest,
  FoundArtifact,
  LegacyAttestation,
  LegacySignature,
  RepositoryRef,
  UnreadableArtifact,
} from './artifacts.js';
import type { FetchedManifest, RegistryClient } from './client.js';
import type { RegistryCall } from './deadline.js';
import { digestTag } from './digest.js';
import { isTag } from './endpoint.js';
import { RegistryError } from './errors.js';
import type { Descriptor } from './manifest.js';
import {
  BUNDLE_PREDICATE_TYPE_ANNOTATION,
  COSIGN_SIMPLE_SIGNING,
  DSSE_ENVELOPE,
  SIGSTORE_BUNDLE_PREFIX,
} from './media-types.js';

/** The client methods discovery uses. */
export type ArtifactStore = Pick<RegistryClient, 'getManifest' | 'getBlob' | 'listReferrers'>;

export interface DiscoveryLimits {
  /** Signature or attestation layers read per legacy tag (default 256). */
  readonly maxLayers: number;
  /** Bundle referrers read (default 64). */
  readonly maxReferrers: number;
  /** Largest payload, envelope or bundle blob (default 1 MiB; real ones are a few KiB). */
  readonly maxArtifactBytes: number;
  /** Blob bytes read per legacy tag, and for the bundles of one image (default 8 MiB). */
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
  readonly kind: 'signature-layers' | 'attestation-layers' | 'bundle-referrers';
  /** Which limit: the number of candidates, or the bytes read. */
  readonly by: 'count' | 'bytes';
  readonly limit: number;
  /** How many candidates there were; `undefined` when the registry's pages were not all read. */
  readonly found: number | undefined;
}

/** A candidate that is not usable and was passed over, with the reason. */
export type Skipped = UnreadableArtifact;

export interface Discovery {
  readonly artifacts: FoundArtifact[];
  readonly truncated: readonly Truncation[];
  readonly skipped: readonly Skipped[];
}

/** One discovery: where it reads, with what, within which limits, and what it noted on the way. */
interface Scan {
  readonly client: ArtifactStore;
  /** The repository holding the signatures: `source.oci`, or the image's own. */
  readonly store: RepositoryRef;
  readonly call: RegistryCall;
  readonly limits: DiscoveryLimits;
  readonly truncated: Truncation[];
  readonly skipped: Skipped[];
}

/**
 * Everything `request` asks for, next to `request.image`, in the signature repository when one is
 * given (`source.oci`): legacy signatures, then legacy attestations, then bundles.
 */
export async function discoverArtifacts(
  client: ArtifactStore,
  request: DiscoveryRequest,
  call: RegistryCall,
  limits: Partial<DiscoveryLimits> = {},
): Promise<Discovery> {
  const store: RepositoryRef = request.signatureRepository ?? request.image;
  const scan: Scan = {
    client,
    store,
    call,
    limits: { ...DEFAULT_DISCOVERY_LIMITS, ...limits },
    truncated: [],
    skipped: [],
  };
  const legacyTag = (suffix: string) => {
    const tag = `${request.tagPrefix ?? ''}${digestTag(request.image.digest)}.${suffix}`;
    if (!isTag(tag)) {
      throw new RegistryError(
        'INVALID_REQUEST',
        store,
        `tag prefix ${JSON.stringify(request.tagPrefix)} makes an invalid tag`,
      );
    }
    return tag;
  };
  const none = Promise.resolve([]);
  const [signatures, attestations, bundles] = await Promise.all([
    request.legacySignatures ? legacySignatures(scan, legacyTag('sig')) : none,
    request.legacyAttestations ? legacyAttestations(scan, legacyTag('att')) : none,
    request.bundles ? bundleArtifacts(scan, request.image.digest) : none,
  ]);
  return {
    artifacts: [...signatures, ...attestations, ...bundles],
    truncated: scan.truncated,
    skipped: scan.skipped,
  };
}

async function legacySignatures(scan: Scan, tag: string): Promise<LegacySignature[]> {
  const layers = await legacyLayers(scan, tag, COSIGN_SIMPLE_SIGNING, 'signature-layers');
  return layers.map(({ source, bytes, annotations }) => ({
    format: 'legacy-signature',
    source,
    payload: bytes,
    annotations,
  }));
}

async function legacyAttestations(scan: Scan, tag: string): Promise<LegacyAttestation[]> {
  const layers = await legacyLayers(scan, tag, DSSE_ENVELOPE, 'attestation-layers');
  return layers.map(({ source, bytes, annotations }) => ({
    format: 'legacy-attestation',
    source,
    envelope: bytes,
    annotations,
  }));
}

interface LayerContent {
  readonly source: string;
  readonly bytes: Uint8Array;
  readonly annotations: Readonly<Record<string, string>>;
}

/** The verified blobs of the `mediaType` layers of the manifest at `tag` (none when the tag is absent). */
async function legacyLayers(
  scan: Scan,
  tag: string,
  mediaType: string,
  kind: Truncation['kind'],
): Promise<LayerContent[]> {
  const { store, limits } = scan;
  const source = `${store.registry}/${store.repository}:${tag}`;
  const fetched = await manifestOrNothing(scan, tag);
  if (fetched === undefined) return [];
  if (fetched.manifest.kind !== 'manifest') {
    throw new RegistryError('MALFORMED', store, `${tag} is an index, not an image manifest`);
  }
  const listedAs = kind === 'signature-layers' ? 'legacy-signature' : 'legacy-attestation';
  const candidates = fetched.manifest.layers.filter((layer) => layer.mediaType === mediaType);
  if (candidates.length > limits.maxLayers) {
    scan.truncated.push({ source, kind, by: 'count', limit: limits.maxLayers, found: candidates.length });
  }
  const budget = new ByteBudget(limits.maxTotalBytes);
  const wanted = candidates.slice(0, limits.maxLayers).map((layer, index) => ({ layer, index }));
  const read = await mapLimited(wanted, limits.concurrency, async ({ layer, index }) => {
    const at = `${source} layer ${index}`;
    const bytes = await readCandidate(scan, at, listedAs, layer, budget);
    return bytes === undefined ? undefined : { source: at, bytes, annotations: layer.annotations };
  });
  if (budget.exceeded) {
    scan.truncated.push({ source, kind, by: 'bytes', limit: limits.maxTotalBytes, found: candidates.length });
  }
  return read.filter((content): content is LayerContent => content !== undefined);
}

async function bundleArtifacts(scan: Scan, digest: string): Promise<BundleArtifact[]> {
  const { store, limits } = scan;
  const referrers = await scan.client.listReferrers(store, digest, scan.call);
  const candidates = unique(referrers.descriptors.filter(isBundleReferrer));
  const source = `${store.registry}/${store.repository}@${digest} referrers`;
  if (referrers.truncated || candidates.length > limits.maxReferrers) {
    scan.truncated.push({
      source,
      kind: 'bundle-referrers',
      by: 'count',
      limit: limits.maxReferrers,
      found: referrers.truncated ? undefined : candidates.length,
    });
  }
  const budget = new ByteBudget(limits.maxTotalBytes);
  const bundles = await mapLimited(
    candidates.slice(0, limits.maxReferrers),
    limits.concurrency,
    (descriptor) => bundleOf(scan, digest, descriptor, budget),
  );
  if (budget.exceeded) {
    scan.truncated.push({
      source,
      kind: 'bundle-referrers',
      by: 'bytes',
      limit: limits.maxTotalBytes,
      found: candidates.length,
    });
  }
  return bundles.filter((bundle): bundle is BundleArtifact => bundle !== undefined);
}

/** One referrer's bundle, or `undefined` (recorded as skipped) when the referrer is not usable. */
async function bundleOf(
  scan: Scan,
  subject: string,
  descriptor: BundleReferrer,
  budget: ByteBudget,
): Promise<BundleArtifact | undefined> {
  const source = `${scan.store.registry}/${scan.store.repository}@${descriptor.digest}`;
  const skip = (reason: string) => {
    scan.skipped.push({ format: 'unreadable', source, listedAs: 'bundle', reason });
    return undefined;
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
  const artifactType = manifest.artifactType ?? descriptor.artifactType;
  if (!artifactType.startsWith(SIGSTORE_BUNDLE_PREFIX)) {
    return skip(`the referrer's artifactType is ${JSON.stringify(artifactType)}, not a Sigstore bundle`);
  }
  if (manifest.subject !== undefined && manifest.subject.digest !== subject) {
    return skip(`the referrer's subject is ${manifest.subject.digest}, not ${subject}`);
  }
  const layers = manifest.layers.filter((layer) => layer.mediaType.startsWith(SIGSTORE_BUNDLE_PREFIX));
  const [layer] = layers;
  if (layer === undefined || layers.length > 1) {
    return skip(`the referrer has ${layers.length} bundle layers, not exactly one`);
  }
  const bundle = await readCandidate(scan, source, 'bundle', layer, budget);
  if (bundle === undefined) return undefined;
  return {
    format: 'bundle',
    source,
    bundle,
    artifactType,
    predicateType:
      manifest.annotations[BUNDLE_PREDICATE_TYPE_ANNOTATION] ??
      descriptor.annotations[BUNDLE_PREDICATE_TYPE_ANNOTATION],
  };
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
  listedAs: UnreadableArtifact['listedAs'],
  layer: Descriptor,
  budget: ByteBudget,
): Promise<Uint8Array | undefined> {
  const skip = (reason: string) => {
    scan.skipped.push({ format: 'unreadable', source, listedAs, reason });
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
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
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

type BundleReferrer = Descriptor & { readonly artifactType: string };

/** A referrer listed as a Sigstore bundle (`application/vnd.dev.sigstore.bundle...`). */
function isBundleReferrer(descriptor: Descriptor): descriptor is BundleReferrer {
  return descriptor.artifactType?.startsWith(SIGSTORE_BUNDLE_PREFIX) === true;
}

function unique<T extends Descriptor>(descriptors: readonly T[]): T[] {
  const seen = new Set<string>();
  return descriptors.filter((descriptor) => !seen.has(descriptor.digest) && seen.add(descriptor.digest));
}
