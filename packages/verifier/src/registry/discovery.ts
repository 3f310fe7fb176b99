// Finding what is stored next to an image for the signature layer to judge: legacy cosign
// signatures (`sha256-<hex>.sig`), legacy attestations (`.att`) and Sigstore bundles attached as
// referrers. Nothing here decides validity; everything handed over is digest-verified bytes.
// "Nothing there" (a missing tag) is an empty result; a registry failure is a `RegistryError`.
import type {
  BundleArtifact,
  DiscoveryRequest,
  FoundArtifact,
  LegacyAttestation,
  LegacySignature,
  RepositoryRef,
} from '../artifacts.js';
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
  /** Signature or attestation layers read per legacy tag (default 32). */
  readonly maxLayers: number;
  /** Bundle referrers read (default 32). */
  readonly maxReferrers: number;
  /** Largest payload, envelope or bundle blob (default 1 MiB; real ones are a few KiB). */
  readonly maxArtifactBytes: number;
}

export const DEFAULT_DISCOVERY_LIMITS: DiscoveryLimits = {
  maxLayers: 32,
  maxReferrers: 32,
  maxArtifactBytes: 1024 * 1024,
};

/** Candidates that were left unread because there were more than the limit. */
export interface Truncation {
  /** `registry/repo:sha256-<hex>.sig`, or `registry/repo@sha256:... referrers`. */
  readonly source: string;
  readonly kind: 'signature-layers' | 'attestation-layers' | 'bundle-referrers';
  readonly limit: number;
  /** How many candidates there were; `undefined` when the registry's pages were not all read. */
  readonly found: number | undefined;
}

/** A candidate that is not usable and was passed over, with the reason. */
export interface Skipped {
  readonly source: string;
  readonly reason: string;
}

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
  const candidates = fetched.manifest.layers.filter((layer) => layer.mediaType === mediaType);
  if (candidates.length > limits.maxLayers) {
    scan.truncated.push({ source, kind, limit: limits.maxLayers, found: candidates.length });
  }
  const contents: LayerContent[] = [];
  for (const [index, layer] of candidates.slice(0, limits.maxLayers).entries()) {
    const bytes = await readArtifactBlob(scan, layer);
    contents.push({ source: `${source} layer ${index}`, bytes, annotations: layer.annotations });
  }
  return contents;
}

async function bundleArtifacts(scan: Scan, digest: string): Promise<BundleArtifact[]> {
  const { store, limits } = scan;
  const referrers = await scan.client.listReferrers(store, digest, scan.call);
  const candidates = unique(referrers.descriptors.filter(isBundleReferrer));
  if (referrers.truncated || candidates.length > limits.maxReferrers) {
    scan.truncated.push({
      source: `${store.registry}/${store.repository}@${digest} referrers`,
      kind: 'bundle-referrers',
      limit: limits.maxReferrers,
      found: referrers.truncated ? undefined : candidates.length,
    });
  }
  const bundles: BundleArtifact[] = [];
  for (const descriptor of candidates.slice(0, limits.maxReferrers)) {
    const bundle = await bundleOf(scan, digest, descriptor);
    if (bundle) bundles.push(bundle);
  }
  return bundles;
}

/** One referrer's bundle, or `undefined` (recorded as skipped) when the referrer is not usable. */
async function bundleOf(
  scan: Scan,
  subject: string,
  descriptor: BundleReferrer,
): Promise<BundleArtifact | undefined> {
  const source = `${scan.store.registry}/${scan.store.repository}@${descriptor.digest}`;
  const skip = (reason: string) => {
    scan.skipped.push({ source, reason });
    return undefined;
  };
  const fetched = await manifestOrNothing(scan, descriptor.digest);
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
  return {
    format: 'bundle',
    source,
    bundle: await readArtifactBlob(scan, layer),
    artifactType,
    predicateType:
      manifest.annotations[BUNDLE_PREDICATE_TYPE_ANNOTATION] ??
      descriptor.annotations[BUNDLE_PREDICATE_TYPE_ANNOTATION],
  };
}

async function readArtifactBlob(scan: Scan, layer: Descriptor): Promise<Uint8Array> {
  const max = scan.limits.maxArtifactBytes;
  if (layer.size > max) {
    throw new RegistryError(
      'TOO_LARGE',
      scan.store,
      `layer ${layer.digest} announces ${layer.size} bytes; the limit is ${max}`,
    );
  }
  return scan.client.getBlob(scan.store, layer.digest, scan.call, { maxBytes: max });
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
