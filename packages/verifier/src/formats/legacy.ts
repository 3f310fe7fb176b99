// Cosign's first layout, and policy-controller's default: an image's signatures are the layers of
// the manifest tagged `sha256-<hex>.sig` (the simple-signing payload, with the signature,
// certificate, chain, Rekor bundle and timestamp in each layer's annotations), its attestations
// the DSSE envelope layers of `sha256-<hex>.att`. With policy-controller's `enable-oci11`, also
// cosign's experimental OCI 1.1 signature referrers (the same layers in a referrer) and referrers
// whose artifactType names in-toto (the first layer a DSSE envelope, whatever its media type
// says, as upstream reads it; verified here as any legacy attestation, where upstream takes it
// unverified).
import type { ArtifactQuery } from '@signet/registry';
import type { FormatQuery, SignatureFormat } from './format.js';
import { encodingOf } from './format.js';

/** A legacy signature layer: the simple-signing payload. */
export const COSIGN_SIMPLE_SIGNING = 'application/vnd.dev.cosign.simplesigning.v1+json';
/** A legacy attestation layer: a DSSE envelope. */
export const DSSE_ENVELOPE = 'application/vnd.dsse.envelope.v1+json';
/** artifactType of cosign's experimental OCI 1.1 signature referrer (`--registry-referrers-mode=oci-1-1`). */
export const COSIGN_OCI11_SIGNATURE = 'application/vnd.dev.cosign.artifact.sig.v1+json';

const signature = (query: ArtifactQuery): FormatQuery => ({
  query,
  encoding: 'legacy-signature',
  read: ({ source, bytes, annotations }) => ({
    format: 'legacy-signature',
    source,
    payload: bytes,
    annotations,
  }),
});

const attestation = (query: ArtifactQuery): FormatQuery => ({
  query,
  encoding: 'legacy-attestation',
  read: ({ source, bytes, annotations }) => ({
    format: 'legacy-attestation',
    source,
    envelope: bytes,
    annotations,
  }),
});

const SIGNATURES = signature({ kind: 'digest-tag', suffix: 'sig', mediaType: COSIGN_SIMPLE_SIGNING });
const ATTESTATIONS = attestation({ kind: 'digest-tag', suffix: 'att', mediaType: DSSE_ENVELOPE });
const OCI11_SIGNATURES = signature({
  kind: 'referrers',
  artifactType: { equals: COSIGN_OCI11_SIGNATURE },
  layers: { pick: 'each', mediaType: COSIGN_SIMPLE_SIGNING },
});
const OCI11_ATTESTATIONS = attestation({
  kind: 'referrers',
  artifactType: { includes: 'in-toto' },
  layers: { pick: 'first' },
});

export const legacyFormat: SignatureFormat = {
  name: 'legacy',
  queries: (evidence, { oci11Referrers }) => {
    const [tag, referrers] =
      evidence === 'attestations' ? [ATTESTATIONS, OCI11_ATTESTATIONS] : [SIGNATURES, OCI11_SIGNATURES];
    return oci11Referrers ? [tag, referrers] : [tag];
  },
  counts: (artifact, evidence) =>
    encodingOf(artifact) === (evidence === 'attestations' ? ATTESTATIONS : SIGNATURES).encoding,
  searched: () => 'in the legacy .sig/.att tags',
  found: (noun, count) =>
    `${count} legacy ${noun}${count === 1 ? '' : 's'} (the .sig/.att tags), which this authority does not read`,
};
