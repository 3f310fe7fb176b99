// One policy against one digest, reading the registry no more than the answer needs. Each signer
// authority's formats are read one after the other while the policy does not pass: an authority
// without `signatureFormat` reads the legacy `.sig`/`.att` tags, and the Sigstore bundle referrers
// only when what the tags hold does not pass. An image signed in one format therefore costs the
// requests it cost when that format was the only one read (issue 23); every authority's reads go
// through the image's one `ArtifactDiscovery`, so a tag or a referrers listing is read once.
import type { ArtifactDiscovery, DigestRef, RegistryCall } from '@signet/registry';
import type { DiscoveredArtifact } from './artifacts.js';
import { findArtifacts } from './formats/discover.js';
import type { CompiledAuthorities, CompiledAuthority, SignerAuthority } from './policy/compile.js';
import { consideredCount, type OtherFormat, searchOf } from './policy/verify-authority.js';
import { type PolicyCheck, type SpecPolicyInputs, verifyPolicy } from './policy/verify-policy.js';
import type { SignatureCheckError } from './sigstore/errors.js';

export interface DigestReads {
  /** The image's discovery, shared by every policy and authority that reads next to it. */
  readonly discovery: ArtifactDiscovery;
  readonly call: RegistryCall;
  readonly inputs: SpecPolicyInputs | undefined;
  /** An authority's failure when the registry could not be read for it (the error is a registry's). */
  readonly unreadable: (error: unknown) => SignatureCheckError;
}

/** Verifies `compiled` against `target`, reading each authority's formats in turn until it passes. */
export async function verifyAtDigest(
  compiled: CompiledAuthorities,
  target: DigestRef,
  reads: DigestReads,
): Promise<PolicyCheck> {
  const { discovery, call, inputs } = reads;
  const signers = compiled.authorities.filter((a): a is SignerAuthority => a.type !== 'static');
  const found = new Map<CompiledAuthority, DiscoveredArtifact[]>();
  const failed = new Map<CompiledAuthority, SignatureCheckError>();
  const verify = (
    artifactsFor: (a: CompiledAuthority) => readonly DiscoveredArtifact[] | SignatureCheckError,
    elsewhereFor?: (a: CompiledAuthority) => readonly OtherFormat[],
  ) => verifyPolicy(compiled, target.digest, artifactsFor, inputs, elsewhereFor, call.signal);
  const readFormat = async (stage: number) => {
    await Promise.all(
      signers.map(async (authority) => {
        const format = authority.formats[stage];
        if (format === undefined) return;
        try {
          // Unusable candidates come too: the authority reports them among what it rejected.
          const search = { ...searchOf(authority), formats: [format] };
          const artifacts = await findArtifacts(discovery, search, target, call);
          found.set(authority, [...(found.get(authority) ?? []), ...artifacts]);
        } catch (error) {
          failed.set(authority, reads.unreadable(error));
        }
      }),
    );
    return verify((a) => found.get(a) ?? []);
  };
  const stages = Math.max(1, ...signers.map((a) => a.formats.length));
  let check = await readFormat(0);
  for (let stage = 1; stage < stages && !check.passed; stage++) check = await readFormat(stage);
  if (check.passed) return check;
  // A format that could not be read may hold what would pass: such an authority cannot say no.
  const readOrFailed = (a: CompiledAuthority) => failed.get(a) ?? found.get(a) ?? [];
  if (failed.size > 0) check = await verify(readOrFailed);
  // Nothing found: look once in the other formats, so the denial can say what is there.
  const elsewhere = await otherFormatsHold(signers, check, target, discovery, call);
  if (elsewhere.size === 0) return check;
  return verify(readOrFailed, (a) => elsewhere.get(a) ?? []);
}

/**
 * For each signer authority that found nothing, how many artifacts the image has in each format
 * it does not read. Only on the way to a denial; a registry failure here just means no hint.
 */
async function otherFormatsHold(
  signers: readonly SignerAuthority[],
  check: PolicyCheck,
  target: DigestRef,
  discovery: ArtifactDiscovery,
  call: RegistryCall,
): Promise<Map<CompiledAuthority, readonly OtherFormat[]>> {
  const empty = new Set(
    check.authorities.flatMap((a) => (!a.passed && a.failure.code === 'NO_SIGNATURES' ? [a.authority] : [])),
  );
  const hints = new Map<CompiledAuthority, readonly OtherFormat[]>();
  await Promise.all(
    signers.map(async (authority) => {
      if (!empty.has(authority.name)) return;
      const held = await Promise.all(
        authority.otherFormats.map(async (format): Promise<OtherFormat[]> => {
          try {
            // Each other format where it is stored by default (enable-oci11 widens only the
            // authority's own formats, as policy-controller's does).
            const search = { ...searchOf(authority), formats: [format], settings: { oci11Referrers: false } };
            const artifacts = await findArtifacts(discovery, search, target, call);
            const count = consideredCount(authority, artifacts, [format]);
            return count > 0 ? [{ format, count }] : [];
          } catch {
            return []; // no hint from this format, the denial stays as it was
          }
        }),
      );
      if (held.flat().length > 0) hints.set(authority, held.flat());
    }),
  );
  return hints;
}
