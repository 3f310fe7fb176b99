// Admission-time evaluation of one authority: the artifacts the registry layer found for the
// image digest, decoded, verified, bound to the digest, and (for attestations) matched by
// predicate type and policy (CEL in its worker threads, CUE and Rego in their engines, hence
// async). Never throws.
import type { FailureKind } from '@signet/core';
import type { DigestRef, DiscoveryRequest } from '@signet/registry';
import type { DiscoveredArtifact } from '../artifacts.js';
import { discoveryRequests as requestsFor, type Search } from '../formats/discover.js';
import type { Evidence, EvidenceNoun, SignatureFormat } from '../formats/index.js';
import { decodeArtifact } from '../sigstore/decode.js';
import { SignatureCheckError } from '../sigstore/errors.js';
import { COSIGN_SIGN_PREDICATE_TYPE, type InTotoStatement } from '../sigstore/payload.js';
import { type SignerIdentity, type VerifiedArtifact, verifyArtifact } from '../sigstore/verify.js';
import type { CompiledAttestation, CompiledAuthority, SignerAuthority, StaticAuthority } from './compile.js';
import { runProgram } from './programs.js';
import {
  type ArtifactCounts,
  type AuthorityCheck,
  type CheckFailure,
  failureOf,
  type RejectedArtifact,
} from './results.js';

/** What an authority looks for: attestations when it names some, else image signatures. */
export function evidenceOf(authority: CompiledAuthority): Evidence {
  return authority.attestations.length > 0 ? 'attestations' : 'signatures';
}

/** What an authority's own discovery looks for: its sources, its formats, its evidence. */
export function searchOf(authority: SignerAuthority): Search {
  return {
    sources: authority.sources,
    formats: authority.formats,
    evidence: evidenceOf(authority),
    settings: { oci11Referrers: authority.oci11Referrers === true },
  };
}

/** Discovery requests for `authority` and `image`: per `source[]` entry, per query of its formats. */
export function discoveryRequests(authority: CompiledAuthority, image: DigestRef): DiscoveryRequest[] {
  if (authority.type === 'static') return [];
  return requestsFor(searchOf(authority), image);
}

/**
 * Verifies `artifacts` (found for `digest`) against one authority; `artifacts` is the error
 * instead when the registry could not be read for it. Never throws.
 */
export async function verifyAuthority(
  authority: CompiledAuthority,
  digest: string,
  artifacts: readonly DiscoveredArtifact[] | SignatureCheckError,
  elsewhere: readonly OtherFormat[] = [],
  signal?: AbortSignal,
): Promise<AuthorityCheck> {
  const name = authority.name;
  if (authority.type === 'static') return staticCheck(authority);
  const state = authority.state;
  if (state.kind === 'unavailable') return unavailableCheck(name, state.reason);
  if (artifacts instanceof SignatureCheckError) return unavailableCheck(name, artifacts);
  const check = state.check;
  const wantsAttestations = authority.attestations.length > 0;
  const considered = artifacts.filter((artifact) => considers(authority, artifact, authority.formats));
  const verified: VerifiedArtifact[] = [];
  const rejected: RejectedArtifact[] = [];
  for (const artifact of considered) {
    if (artifact.format === 'unreadable') {
      const error = new SignatureCheckError('MALFORMED_ARTIFACT', `unreadable: ${artifact.reason}`);
      rejected.push({ source: artifact.source, format: artifact.listedAs, error });
      continue;
    }
    try {
      const result = verifyArtifact(decodeArtifact(artifact), check, digest);
      if (!wantsAttestations) requireSignaturePredicate(result);
      verified.push(result);
    } catch (error) {
      rejected.push({ source: artifact.source, format: artifact.format, error: asCheckError(error) });
    }
  }
  const counts = { found: considered.length, verified: verified.length };
  const noun = wantsAttestations ? 'attestation' : 'signature';
  if (verified.length === 0) {
    return {
      authority: name,
      passed: false,
      failure:
        counts.found === 0
          ? failureOf('NO_SIGNATURES', nothingFound(noun, authority, elsewhere))
          : noValid(noun, counts, rejected),
      counts,
      rejected,
    };
  }
  if (!wantsAttestations) {
    const signer = verified[0]?.signer;
    return {
      authority: name,
      passed: true,
      signer,
      static: false,
      counts,
      signatures: verified,
      attestations: {},
      rejected,
    };
  }
  return attestationCheck(name, authority.attestations, verified, counts, rejected, signal);
}

function unavailableCheck(authority: string, error: SignatureCheckError): AuthorityCheck {
  return {
    authority,
    passed: false,
    // The message is the reason; only what caused it goes into `cause` (no repetition).
    failure: failureOf(error.code, error.message, error.cause),
    counts: { found: 0, verified: 0 },
    rejected: [],
  };
}

function staticCheck(authority: StaticAuthority): AuthorityCheck {
  const counts = { found: 0, verified: 0 };
  if (authority.action === 'pass') {
    return {
      authority: authority.name,
      passed: true,
      signer: undefined,
      static: true,
      counts,
      signatures: [],
      attestations: {},
      rejected: [],
    };
  }
  const reason = `disallowed by static policy${authority.message ? `: ${authority.message}` : ''}`;
  return {
    authority: authority.name,
    passed: false,
    failure: failureOf('STATIC_FAIL', reason),
    counts,
    rejected: [],
  };
}

/** Whether an authority reading `formats` looks at `artifact`: it counts as its evidence in one of them. */
function considers(
  authority: SignerAuthority,
  artifact: DiscoveredArtifact,
  formats: readonly SignatureFormat[],
): boolean {
  const evidence = evidenceOf(authority);
  return formats.some((format) => format.counts(artifact, evidence));
}

/** A DSSE bundle counts as an image signature only with cosign's signing predicate type. */
function requireSignaturePredicate(result: VerifiedArtifact): void {
  const type = result.statement?.predicateType;
  if (type !== undefined && type !== COSIGN_SIGN_PREDICATE_TYPE) {
    throw new SignatureCheckError(
      'PREDICATE_TYPE_MISMATCH',
      `bundle holds a ${JSON.stringify(type)} attestation, not an image signature (${COSIGN_SIGN_PREDICATE_TYPE})`,
    );
  }
}

function asCheckError(error: unknown): SignatureCheckError {
  if (error instanceof SignatureCheckError) return error;
  return new SignatureCheckError('VERIFIER_ERROR', 'unexpected error while verifying', { cause: error });
}

const MAX_REASONS = 3;

/**
 * What the image has in a format an authority does not read: the reason it found nothing says
 * so, instead of a bare "no signature found" (cosign 3 writes bundles, older cosign `.sig` tags).
 */
export interface OtherFormat {
  readonly format: SignatureFormat;
  readonly count: number;
}

/** How many of `artifacts` `authority` would consider, reading `formats` (its own by default). */
export function consideredCount(
  authority: SignerAuthority,
  artifacts: readonly DiscoveredArtifact[],
  formats: readonly SignatureFormat[] = authority.formats,
): number {
  return artifacts.filter((artifact) => considers(authority, artifact, formats)).length;
}

/**
 * "no signature found", and when other formats hold something: where the authority looked and why
 * there only (its `signatureFormat`, or the deployment's default formats), and what they hold.
 */
function nothingFound(
  noun: EvidenceNoun,
  authority: SignerAuthority,
  elsewhere: readonly OtherFormat[],
): string {
  // An attestation authority says which predicate types it wanted: "no attestation found" alone
  // does not tell a provenance policy from an SBOM one.
  const types = [...new Set(authority.attestations.map((a) => a.predicateType))];
  const none = `no ${noun} found${types.length === 0 ? '' : ` (wanted: ${types.join(', ')})`}`;
  if (elsewhere.length === 0) return none;
  const { formats, signatureFormat } = authority;
  const searched = formats.map((format) => format.searched(noun)).join(' or ');
  const why =
    signatureFormat === undefined
      ? `the default signature format${formats.length === 1 ? '' : 's'}`
      : `signatureFormat: ${signatureFormat}`;
  const held = elsewhere.map(({ format, count }) => `the image has ${format.found(noun, count)}`);
  return [`${none} ${searched} (${why})`, ...held].join('; ');
}

function noValid(
  noun: EvidenceNoun,
  counts: ArtifactCounts,
  rejected: readonly RejectedArtifact[],
): CheckFailure {
  const reason = `no valid ${noun}: ${counts.found} found, 0 verified`;
  const kind: FailureKind = rejected.every((r) => r.error.kind === 'infrastructure')
    ? 'infrastructure'
    : 'policy';
  return { kind, reason, code: 'NO_VALID_SIGNATURE', cause: causeOf(rejected) };
}

/**
 * Why the artifacts were refused, each distinct reason once (at most MAX_REASONS): the deny
 * message reads `no valid signature: 2 found, 0 verified (signature does not match key "k")`.
 * Which artifact said what stays in `AuthorityCheck.rejected`, for logs.
 */
function causeOf(rejected: readonly RejectedArtifact[]): Error | undefined {
  const distinct = new Map<string, Error>();
  for (const r of rejected) if (!distinct.has(r.error.message)) distinct.set(r.error.message, r.error);
  const errors = [...distinct.values()];
  if (errors.length <= 1) return errors[0];
  const shown = errors.slice(0, MAX_REASONS);
  const more = errors.length > MAX_REASONS ? `${errors.length - MAX_REASONS} more reasons not shown` : '';
  return new AggregateError(more === '' ? shown : [...shown, new Error(more)], '');
}

/** A verified attestation: DSSE content, so it always has a statement. */
type Attested = VerifiedArtifact & { readonly statement: InTotoStatement };

function isAttested(artifact: VerifiedArtifact): artifact is Attested {
  return artifact.statement !== undefined;
}

async function attestationCheck(
  authority: string,
  wanted: readonly CompiledAttestation[],
  verified: readonly VerifiedArtifact[],
  counts: ArtifactCounts,
  rejected: readonly RejectedArtifact[],
  signal: AbortSignal | undefined,
): Promise<AuthorityCheck> {
  const attested = verified.filter(isAttested);
  const passing: Record<string, readonly VerifiedArtifact[]> = {};
  const signers: SignerIdentity[] = [];
  for (const attestation of wanted) {
    const outcome = await checkAttestation(attestation, attested, signal);
    if ('reason' in outcome) return { authority, passed: false, failure: outcome, counts, rejected };
    passing[attestation.name] = outcome;
    signers.push(...outcome.map((artifact) => artifact.signer));
  }
  return {
    authority,
    passed: true,
    signer: signers[0],
    static: false,
    counts,
    signatures: [],
    attestations: passing,
    rejected,
  };
}

async function checkAttestation(
  attestation: CompiledAttestation,
  attested: readonly Attested[],
  signal: AbortSignal | undefined,
): Promise<readonly Attested[] | CheckFailure> {
  const matching = attested.filter((a) => a.statement.predicateType === attestation.predicateType);
  if (matching.length === 0) {
    const seen = [...new Set(attested.map((a) => a.statement.predicateType))].join(', ');
    return failureOf(
      'NO_MATCHING_ATTESTATION',
      `no verified attestation of type ${JSON.stringify(attestation.requested)} (${attestation.predicateType}) for ${JSON.stringify(attestation.name)}: ${attested.length} verified, of types ${seen}`,
    );
  }
  const program = attestation.policy;
  if (program === undefined) return matching;
  const failures: Error[] = [];
  let engineFailed = false;
  const passed: Attested[] = [];
  // One at a time: an engine runs one evaluation at a time anyway, and upstream stops at none.
  for (const artifact of matching) {
    const outcome = await runProgram(
      program,
      attestation.name,
      {
        cel: () => attestationBindings(artifact),
        // policy-controller evaluates CUE and Rego over the whole in-toto Statement.
        document: () => artifact.statement.json,
      },
      signal,
    );
    if (outcome.passed) passed.push(artifact);
    else {
      engineFailed ||= outcome.infrastructure;
      failures.push(new Error(`${artifact.source}: ${outcome.reason}`, { cause: outcome.cause }));
    }
  }
  if (passed.length > 0) return passed;
  const reasons = [...new Set(failures.map((failure) => failure.message))];
  const more = reasons.length > MAX_REASONS ? `; ${reasons.length - MAX_REASONS} more` : '';
  const shown = `${reasons.slice(0, MAX_REASONS).join('; ')}${more}`;
  // The reason already says what each policy run said; the cause carries only what lies beneath
  // (an engine's own error), so that the deny line says nothing twice.
  const beneath = distinctErrors(failures.map((failure) => failure.cause));
  return failureOf(
    engineFailed ? 'POLICY_ENGINE_FAILED' : 'ATTESTATION_POLICY_FAILED',
    `attestation ${JSON.stringify(attestation.name)} policy failed for all ${matching.length} of type ${attestation.predicateType} (${shown})`,
    beneath.length === 0 ? undefined : beneath.length === 1 ? beneath[0] : new AggregateError(beneath, ''),
  );
}

/** The defined errors among `causes`, each message once, at most MAX_REASONS. */
function distinctErrors(causes: readonly unknown[]): unknown[] {
  const seen = new Map<string, unknown>();
  for (const cause of causes) {
    if (cause === undefined) continue;
    const key = cause instanceof Error ? cause.message : String(cause);
    if (!seen.has(key)) seen.set(key, cause);
  }
  return [...seen.values()].slice(0, MAX_REASONS);
}

/**
 * What an attestation's CEL policy sees: `predicateType` (string), `predicate` (the predicate JSON,
 * `null` when absent), `subject` (the statement's subject list), `statement` (the whole in-toto
 * Statement) and `signer` (`{type: "keyless", issuer, subject}` or `{type: "key", name, fingerprint}`).
 */
export function attestationBindings(artifact: Attested): Record<string, unknown> {
  const statement = artifact.statement;
  return {
    predicateType: statement.predicateType,
    predicate: statement.predicate,
    subject: statement.json.subject,
    statement: statement.json,
    signer: { ...artifact.signer },
  };
}
