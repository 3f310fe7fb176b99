// A Pod that names an image index (a multi-architecture image) runs one of its platform manifests,
// chosen by the node. policy-controller verifies the digest it is given, so only the index's own
// signatures count; tools other than `cosign sign --recursive` sign the platform manifests only.
// A policy's `signet.dev/index-signatures` says which it needs: the index's (the default), every
// platform's, either, or both. Each platform is judged as an image of its own against the whole
// policy; the answer is cached under the index's digest, which fixes the platforms it lists.
import type { VerificationFailure } from '@signet/core';
import type { Descriptor, Manifest } from '@signet/registry';
import type { CompiledAuthorities } from './policy/compile.js';
import type { PolicyCheck } from './policy/verify-policy.js';

type FailedCheck = Extract<PolicyCheck, { readonly passed: false }>;

/** The most platform manifests of one index that are verified; an index listing more is denied. */
export const MAX_PLATFORMS = 64;

/** buildx lists its provenance and SBOM manifests in the index; no node runs them. */
const REFERENCE_TYPE = 'vnd.docker.reference.type';
const INDEX_MEDIA_TYPES = new Set([
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
]);

export interface IndexedImage {
  /** The digest the Pod names. */
  readonly digest: string;
  /** Its manifest, read once per image (only when the policy asks for platforms). */
  readonly manifest: () => Promise<Manifest>;
  /** The policy's check of one digest (the index's, or a platform's). */
  readonly verifyAt: (digest: string) => Promise<PolicyCheck>;
  /** The failure when the manifest cannot be read (an infrastructure failure). */
  readonly unreadable: (error: unknown) => VerificationFailure;
}

/** `compiled` against the image, by its own digest or by its platforms as the policy says. */
export async function verifyIndexed(
  compiled: CompiledAuthorities,
  image: IndexedImage,
): Promise<PolicyCheck> {
  const wanted = compiled.indexSignatures ?? 'index';
  if (wanted === 'index') return image.verifyAt(image.digest);
  let manifest: Manifest;
  try {
    manifest = await image.manifest();
  } catch (error) {
    return failed(compiled, image.unreadable(error));
  }
  if (manifest.kind !== 'index') return image.verifyAt(image.digest);
  const platforms = () => verifyPlatforms(compiled, manifest.manifests, image);
  if (wanted === 'platforms') return platforms();
  const index = await image.verifyAt(image.digest);
  if (wanted === 'index-and-platforms') return index.passed ? platforms() : prefixed(index, 'the index');
  if (index.passed) return index;
  const each = await platforms();
  if (each.passed) return each;
  const failures = [index.failure, each.failure];
  const causes = failures.flatMap((f) => (f.cause === undefined ? [] : [f.cause]));
  const failure: VerificationFailure = {
    // Infrastructure when either side could not be checked: it might have passed.
    kind: failures.some((f) => f.kind === 'infrastructure') ? 'infrastructure' : 'policy',
    reason: `neither the index nor each of its platforms passes: the index: ${failures.map((f) => f.reason).join('; ')}`,
    ...(causes.length === 0
      ? {}
      : { cause: causes.length === 1 ? causes[0] : new AggregateError(causes, '') }),
  };
  return { ...failed(compiled, failure), authorities: index.authorities };
}

/** Every platform manifest passes the policy; else the first that does not, named. */
async function verifyPlatforms(
  compiled: CompiledAuthorities,
  listed: readonly Descriptor[],
  image: IndexedImage,
): Promise<PolicyCheck> {
  const platforms = listed.filter((entry) => entry.annotations[REFERENCE_TYPE] !== 'attestation-manifest');
  const refuse = (reason: string) => failed(compiled, { kind: 'policy', reason });
  if (platforms.length === 0) return refuse('the index lists no platform manifests');
  if (platforms.length > MAX_PLATFORMS)
    return refuse(
      `the index lists ${platforms.length} platform manifests; at most ${MAX_PLATFORMS} are verified`,
    );
  const nested = platforms.find((entry) => INDEX_MEDIA_TYPES.has(entry.mediaType));
  if (nested !== undefined)
    return refuse(`${nameOf(nested)} is an index itself; nested indexes are not verified per platform`);
  const checks = await Promise.all(platforms.map((entry) => image.verifyAt(entry.digest)));
  const failing = checks.find((check): check is FailedCheck => !check.passed);
  if (failing === undefined) return checks[0] as PolicyCheck;
  return prefixed(failing, nameOf(platforms[checks.indexOf(failing)] as Descriptor));
}

/** `platform linux/arm64 (sha256:...)`. */
function nameOf(entry: Descriptor): string {
  return `platform ${entry.platform ?? 'unnamed'} (${entry.digest})`;
}

function prefixed(check: FailedCheck, what: string): PolicyCheck {
  return { ...check, failure: { ...check.failure, reason: `${what}: ${check.failure.reason}` } };
}

function failed(compiled: CompiledAuthorities, failure: VerificationFailure): PolicyCheck {
  return { policy: compiled.policy, passed: false, failure, authorities: [] };
}
