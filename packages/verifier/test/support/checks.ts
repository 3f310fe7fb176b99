// Builds SignatureChecks the way the policy compiler does, for tests of the signature layer.
import type { Identity } from '@signet/k8s-types';
import type { TrustMaterial } from '@sigstore/verify';
import type { FoundArtifact } from '../../src/artifacts.js';
import { decodeArtifact } from '../../src/sigstore/decode.js';
import { SignatureCheckError } from '../../src/sigstore/errors.js';
import { compileIdentity } from '../../src/sigstore/identity.js';
import { pemBlocks, publicKeyFromBlock } from '../../src/sigstore/pem.js';
import {
  type Requirements,
  type SignatureCheck,
  type VerifiedArtifact,
  verifyArtifact,
} from '../../src/sigstore/verify.js';
import { DIGEST } from './fixtures.js';

export const NOTHING: Requirements = { tlog: false, timestampAuthority: false, sct: false };
export const KEYLESS: Requirements = { tlog: true, timestampAuthority: false, sct: true };

export type Trust = Omit<TrustMaterial, 'publicKey'>;
export const NO_TRUST: Trust = {
  certificateAuthorities: [],
  ctlogs: [],
  tlogs: [],
  timestampAuthorities: [],
};

export function trustOf(material: TrustMaterial): Trust {
  const { publicKey: _unused, ...trust } = material;
  return trust;
}

export function keyCheck(
  keys: readonly { readonly name: string; readonly pem: string }[],
  requirements: Requirements = NOTHING,
  trust: Trust = NO_TRUST,
  hashAlgorithm?: string,
): SignatureCheck {
  return {
    signer: {
      type: 'key',
      keys: keys.map(({ name, pem }) => ({ name, key: publicKeyFromBlock(pemBlocks(pem)[0] as never) })),
      hashAlgorithm,
    },
    requirements,
    trust,
  };
}

export function keylessCheck(
  identities: readonly Identity[],
  trust: Trust,
  requirements: Requirements = KEYLESS,
): SignatureCheck {
  return { signer: { type: 'keyless', identities: identities.map(compileIdentity) }, requirements, trust };
}

/** Decodes and verifies; returns the result or the SignatureCheckError (anything else fails the test). */
export function attempt(
  artifact: FoundArtifact,
  check: SignatureCheck,
  digest = DIGEST,
): VerifiedArtifact | SignatureCheckError {
  try {
    return verifyArtifact(decodeArtifact(artifact), check, digest);
  } catch (error) {
    if (error instanceof SignatureCheckError) return error;
    throw error;
  }
}

/** The error of a failed attempt, failing the test when it verified. */
export function rejection(
  artifact: FoundArtifact,
  check: SignatureCheck,
  digest = DIGEST,
): SignatureCheckError {
  const result = attempt(artifact, check, digest);
  if (!(result instanceof SignatureCheckError))
    throw new Error(`expected a rejection, got signer ${JSON.stringify(result.signer)}`);
  return result;
}

export function verified(artifact: FoundArtifact, check: SignatureCheck, digest = DIGEST): VerifiedArtifact {
  const result = attempt(artifact, check, digest);
  if (result instanceof SignatureCheckError)
    throw new Error(`expected verification, got ${result.code}: ${result.message}`, { cause: result });
  return result;
}
