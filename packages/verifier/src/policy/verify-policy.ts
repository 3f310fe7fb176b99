// One ClusterImagePolicy for one image: every authority verified, combined by `@signet/core`'s
// `policyVerdict` (any authority passing passes the policy, as in policy-controller), then the
// spec-level policy (CEL, CUE or Rego) over what matched.
import { combineAuthorities, type PolicyResult } from '@signet/core';
import type { DiscoveredArtifact } from '../artifacts.js';
import type { SignatureCheckError } from '../sigstore/errors.js';
import type { SignerIdentity, VerifiedArtifact } from '../sigstore/verify.js';
import type { CompiledAuthorities, CompiledAuthority, CompiledSpecPolicy } from './compile.js';
import { runProgram } from './programs.js';
import { type AuthorityCheck, failureOf } from './results.js';
import { type OtherFormat, verifyAuthority } from './verify-authority.js';

/** Extra inputs of a spec-level policy, provided by the caller when the policy asks for them. */
export interface SpecPolicyInputs {
  /** The admitted object's spec (`includeSpec`). */
  readonly spec?: unknown;
  /** The admitted object's metadata (`includeObjectMeta`). */
  readonly metadata?: unknown;
  /** `{apiVersion, kind}` (`includeTypeMeta`). */
  readonly typemeta?: unknown;
  /** Image config files by platform (`fetchConfigFile`). */
  readonly config?: unknown;
}

/**
 * One policy's result with the per-authority details: a `@signet/core` `PolicyResult`, which core
 * joins with its own record of the policy (its mode) into a verdict.
 */
export type PolicyCheck = PolicyResult & { readonly authorities: readonly AuthorityCheck[] };

/**
 * Verifies every authority of `compiled` (all of them: the spec-level policy sees every match),
 * combines them with `@signet/core`'s `policyVerdict` (any passing authority passes), then
 * evaluates the spec-level CEL policy when there is one and the policy passed.
 */
export async function verifyPolicy(
  compiled: CompiledAuthorities,
  digest: string,
  /** What discovery found for each authority, or why the registry could not be read for it. */
  artifactsFor: (authority: CompiledAuthority) => readonly DiscoveredArtifact[] | SignatureCheckError,
  inputs: SpecPolicyInputs = {},
  /** What the image has in formats an authority does not read, to say so when it finds nothing. */
  elsewhereFor: (authority: CompiledAuthority) => readonly OtherFormat[] = () => [],
  /** Aborted when the answer is no longer awaited: CEL evaluations still waiting are dropped. */
  signal?: AbortSignal,
): Promise<PolicyCheck> {
  const authorities = await Promise.all(
    compiled.authorities.map((authority) =>
      verifyAuthority(authority, digest, artifactsFor(authority), elsewhereFor(authority), signal),
    ),
  );
  const verdict = combineAuthorities(compiled.policy, authorities);
  const spec = compiled.specPolicy;
  if (!verdict.passed || spec === undefined) return { ...verdict, authorities };
  const outcome = await runProgram(
    spec.program,
    'ClusterImagePolicy',
    {
      cel: () => ({
        authorityMatches: authorityMatches(authorities),
        spec: included(spec.includeSpec, inputs.spec),
        metadata: included(spec.includeObjectMeta, inputs.metadata),
        typemeta: included(spec.includeTypeMeta, inputs.typemeta),
        config: included(spec.fetchConfigFile, inputs.config),
      }),
      document: () => policyResult(authorities, spec, inputs, requestedPredicateTypes(compiled)),
    },
    signal,
  );
  if (outcome.passed) return { ...verdict, authorities };
  const code = outcome.infrastructure ? 'POLICY_ENGINE_FAILED' : 'POLICY_FAILED';
  const failure = failureOf(code, `spec.policy failed: ${outcome.reason}`, outcome.cause);
  return { policy: compiled.policy, passed: false, failure, authorities };
}

/** An input the policy asked for, or `null`: the variable is always bound, so CEL can test it. */
function included(asked: boolean, value: unknown): unknown {
  return asked && value !== undefined ? value : null;
}

/**
 * policy-controller's `authorityMatches` for the spec-level policy: for each passing authority,
 * `signatures` (`{subject, issuer}` keyless, `{key, fingerprint}` keyed), `attestations` by name
 * (the same plus `predicateType`), and `static`.
 */
export function authorityMatches(checks: readonly AuthorityCheck[]): Record<string, unknown> {
  const matches: Record<string, unknown> = {};
  for (const check of checks) {
    if (!check.passed) continue;
    const attestations: Record<string, unknown> = {};
    for (const [name, list] of Object.entries(check.attestations)) {
      attestations[name] = list.map((a) => ({
        ...signerFields(a.signer),
        predicateType: a.statement?.predicateType,
      }));
    }
    matches[check.authority] = {
      signatures: check.signatures.map((s) => signerFields(s.signer)),
      attestations,
      static: check.static,
    };
  }
  return matches;
}

function signerFields(signer: SignerIdentity): Record<string, string> {
  return signer.type === 'keyless'
    ? { subject: signer.subject, issuer: signer.issuer }
    : { key: signer.name, fingerprint: signer.fingerprint };
}

/**
 * The document policy-controller gives a CUE or Rego spec-level policy: its `PolicyResult` as
 * JSON, empty fields left out (Go's `omitempty`). Per passing authority, `signatures` (`{id}` keyed;
 * keyless adds `subject`, `issuer` and the certificate's GitHub workflow extensions), or
 * `attestations` by name (the same plus `predicateType` as the policy wrote it and the stored
 * blob's `digest`), or `static: true`; then `spec`, `metadata`, `typemeta` and `config` when the
 * policy asks for them and the caller has them. `requested` names an attestation's
 * `predicateType` as written in the policy (the statement's own type when unknown).
 */
export function policyResult(
  checks: readonly AuthorityCheck[],
  spec: CompiledSpecPolicy,
  inputs: SpecPolicyInputs,
  requested: (authority: string, attestation: string) => string | undefined = () => undefined,
): Record<string, unknown> {
  const matches: Record<string, unknown> = {};
  for (const check of checks) {
    if (!check.passed) continue;
    if (check.signatures.length > 0) {
      matches[check.authority] = { signatures: check.signatures.map(upstreamSignature) };
    } else if (Object.keys(check.attestations).length > 0) {
      const attestations: Record<string, unknown> = {};
      for (const [name, list] of Object.entries(check.attestations)) {
        // Undefined fields are left out of the JSON the engine is given.
        attestations[name] = list.map((a) => ({
          ...upstreamSignature(a),
          predicateType: requested(check.authority, name) ?? a.statement?.predicateType,
          digest: a.digest,
        }));
      }
      matches[check.authority] = { attestations };
    } else if (check.static) {
      matches[check.authority] = { static: true };
    }
  }
  const document: Record<string, unknown> = {};
  if (Object.keys(matches).length > 0) document.authorityMatches = matches;
  const add = (asked: boolean, key: string, value: unknown) => {
    if (asked && value !== undefined && value !== null) document[key] = value;
  };
  add(spec.fetchConfigFile, 'config', inputs.config);
  add(spec.includeSpec, 'spec', inputs.spec);
  add(spec.includeObjectMeta, 'metadata', inputs.metadata);
  add(spec.includeTypeMeta, 'typemeta', inputs.typemeta);
  return document;
}

function upstreamSignature(artifact: VerifiedArtifact): Record<string, string> {
  const { signer } = artifact;
  if (signer.type === 'key') return { id: artifact.id };
  return { id: artifact.id, subject: signer.subject, issuer: signer.issuer, ...artifact.github };
}

/** The `predicateType` each authority's attestation was asked for, by authority and attestation name. */
export function requestedPredicateTypes(
  compiled: CompiledAuthorities,
): (authority: string, attestation: string) => string | undefined {
  const byName = new Map(
    compiled.authorities.map((a) => [a.name, new Map(a.attestations.map((t) => [t.name, t.requested]))]),
  );
  return (authority, attestation) => byName.get(authority)?.get(attestation);
}
