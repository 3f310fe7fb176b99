// The fields policy-controller puts beside each verified signature in the document a CUE or Rego
// spec-level policy evaluates (`PolicySignature`, `PolicyAttestation`): a signature `id` and the
// GitHub workflow extensions of the certificate. Computed as upstream computes them, so that a
// policy comparing or counting them gets the same values.
import { createHash } from 'node:crypto';
import type { Bundle } from '@sigstore/bundle';
import { X509Certificate } from '@sigstore/core';
import type { DecodedArtifact } from './decode.js';

/** What upstream reports beside a verified artifact's signer. */
export interface UpstreamFields {
  readonly id: string;
  readonly digest: string;
  readonly github: Readonly<Record<string, string>>;
}

/** The fields of `artifact`, whose certificate (when `keyless`) is its bundle's leaf. */
export function upstreamFields(artifact: DecodedArtifact, keyless: boolean): UpstreamFields {
  const leaf = keyless ? leafCertificate(artifact.bundle) : undefined;
  return {
    id: signatureId(artifact.layerSignature, leaf),
    digest: artifact.blobDigest,
    github: leaf === undefined ? {} : githubExtensions(leaf),
  };
}

/** The signer's certificate: the bundle's certificate, or the first of its chain. */
export function leafCertificate(bundle: Bundle): Buffer | undefined {
  const content = bundle.verificationMaterial.content;
  if (content.$case === 'certificate') return content.certificate.rawBytes;
  if (content.$case === 'x509CertificateChain') return content.x509CertificateChain.certificates[0]?.rawBytes;
  return undefined;
}

/**
 * Upstream's `signatureID`: hex SHA-256 of the signature bytes, followed by the leaf certificate
 * as Go's PEM encoder writes it (64-column base64) when there is one.
 */
export function signatureId(signature: Uint8Array, leafDer: Uint8Array | undefined): string {
  const hash = createHash('sha256').update(signature);
  if (leafDer !== undefined) hash.update(certificatePem(leafDer));
  return hash.digest('hex');
}

function certificatePem(der: Uint8Array): string {
  const body = Buffer.from(der)
    .toString('base64')
    .replace(/.{64}(?=.)/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`;
}

/** Fulcio's first GitHub extensions (raw string values), by the JSON name upstream gives them. */
const GITHUB_EXTENSIONS: readonly (readonly [string, string])[] = [
  ['githubWorkflowTrigger', '1.3.6.1.4.1.57264.1.2'],
  ['githubWorkflowSha', '1.3.6.1.4.1.57264.1.3'],
  ['githubWorkflowName', '1.3.6.1.4.1.57264.1.4'],
  ['githubWorkflowRepo', '1.3.6.1.4.1.57264.1.5'],
  ['githubWorkflowRef', '1.3.6.1.4.1.57264.1.6'],
];

/** The GitHub workflow extensions a certificate carries (none are left empty, as Go's `omitempty`). */
export function githubExtensions(leafDer: Uint8Array): Readonly<Record<string, string>> {
  const certificate = X509Certificate.parse(Buffer.from(leafDer));
  const found: Record<string, string> = {};
  for (const [name, oid] of GITHUB_EXTENSIONS) {
    const value = certificate.extension(oid)?.value.toString('utf8');
    if (value) found[name] = value;
  }
  return found;
}
