// Turns what the KMS APIs return (DER SPKI, PEM, raw Ed25519 bytes, JSON Web Keys) into the PEM
// `PUBLIC KEY` the verifier reads, checking on the way that it is a public key at all.
import { createPublicKey, type JsonWebKeyInput } from 'node:crypto';

export function pemFromSpki(der: Uint8Array): string {
  return createPublicKey({ key: Buffer.from(der), format: 'der', type: 'spki' })
    .export({ format: 'pem', type: 'spki' })
    .toString();
}

export function pemFromPem(pem: string): string {
  return createPublicKey({ key: pem, format: 'pem' }).export({ format: 'pem', type: 'spki' }).toString();
}

/** Ed25519 public key from its 32 raw bytes (Vault returns them base64-encoded). */
export function pemFromEd25519(raw: Uint8Array): string {
  if (raw.length !== 32) throw new Error(`an Ed25519 public key has 32 bytes, got ${raw.length}`);
  return createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') },
    format: 'jwk',
  })
    .export({ format: 'pem', type: 'spki' })
    .toString();
}

export function pemFromJwk(jwk: JsonWebKeyInput['key']): string {
  return createPublicKey({ key: jwk, format: 'jwk' }).export({ format: 'pem', type: 'spki' }).toString();
}

/** The digest an elliptic curve's cosign signatures use (the KMS providers derive it the same way). */
export function hashOfCurve(curve: string | undefined): string | undefined {
  switch (curve) {
    case 'P-384':
      return 'sha384';
    case 'P-521':
      return 'sha512';
    case 'P-256':
    case 'P-256K':
      return 'sha256';
    default:
      return undefined;
  }
}
