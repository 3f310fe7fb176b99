// One ClusterImagePolicy for one image: every authority verified, combined by `@signet/core`'s
// `policyVerdict` (any authority passing passes the policy, as in policy-controller), then the
// spec-level CEL policy over what matched. Pure and synchronous.
import { type PolicyVerdict, policyVerdict } from '@signet/core';
import type { FoundArtifact } from '../artifacts.js';
import type { SignatureCheckError } from '../sigstore/errors.js';
import type { SignerIdentity } from '../sigstore/verify.js';
import type { CompiledAuthorities, CompiledAuthority } from './compile.js';
import { type AuthorityCheck, failureOf } from './results.js';
import { verifyAuthority } from './verify-authority.js';

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

/** One policy's verdict with the per-authority details. Structurally a `@signet/core` `PolicyVerdict`. */
export type PolicyCheck = PolicyVerdict & { readonly authorities: readonly AuthorityCheck[] };

/**
 * Verifies every authority of `compiled` (all of them: the spec-level policy sees every match),
 * combines them with `@signet/core`'s `policyVerdict` (any passing authority passes), then
 * evaluates the spec-level CEL policy when there is one and the policy passed.
 */
export function verifyPolicy(
  compiled: CompiledAuthorities,
  digest: string,
  /** What discovery found for each authority, or why the registry could not be read for it. */
  artifactsFor: (authority: CompiledAuthority) => readonly FoundArtifact[] | SignatureCheckError,
  inputs: SpecPolicyInputs = {},
): PolicyCheck {
  const authorities = compiled.authorities.map((authority) =>
    verifyAuthority(authority, digest, artifactsFor(authority)),
  );
  const verdict = policyVerdict({ name: compiled.policy, mode: compiled.mode }, authorities);
  const spec = compiled.specPolicy;
  if (!verdict.passed || spec === undefined) return { ...verdict, authorities };
  const bindings: Record<string, unknown> = {
    authorityMatches: authorityMatches(authorities),
    spec: included(spec.includeSpec, inputs.spec),
    metadata: included(spec.includeObjectMeta, inputs.metadata),
    typemeta: included(spec.includeTypeMeta, inputs.typemeta),
    config: included(spec.fetchConfigFile, inputs.config),
  };
  const outcome = spec.program.evaluate(bindings);
  if (outcome.passed) return { ...verdict, authorities };
  const failure = failureOf('POLICY_FAILED', `spec.policy failed: ${outcome.reason}`, outcome.cause);
  return { policy: compiled.policy, mode: compiled.mode, passed: false, failure, authorities };
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
