// Cosign's first layout, and policy-controller's default: an image's signatures are the layers of
// the manifest tagged `sha256-<hex>.sig` (the simple-signing payload, with the signature,
// certificate, chain, Rekor bundle and timestamp in each layer's annotations), its attestations
// the DSSE envelope layers of `sha256-<hex>.att`.
import type { FormatQuery, SignatureFormat } from './format.js';
import { encodingOf } from './format.js';

/** A legacy signature layer: the simple-signing payload. */
export const COSIGN_SIMPLE_SIGNING = 'application/vnd.dev.cosign.simplesigning.v1+json';
/** A legacy attestation layer: a DSSE envelope. */
export const DSSE_ENVELOPE = 'application/vnd.dsse.envelope.v1+json';

const SIGNATURES: FormatQuery = {
  query: { kind: 'digest-tag', suffix: 'sig', mediaType: COSIGN_SIMPLE_SIGNING },
  encoding: 'legacy-signature',
  read: ({ source, bytes, annotations }) => ({
    format: 'legacy-signature',
    source,
    payload: bytes,
    annotations,
  }),
};

const ATTESTATIONS: FormatQuery = {
  query: { kind: 'digest-tag', suffix: 'att', mediaType: DSSE_ENVELOPE },
  encoding: 'legacy-attestation',
  read: ({ source, bytes, annotations }) => ({
    format: 'legacy-attestation',
    source,
    envelope: bytes,
    annotations,
  }),
};

export const legacyFormat: SignatureFormat = {
  name: 'legacy',
  queries: (evidence) => [evidence === 'attestations' ? ATTESTATIONS : SIGNATURES],
  counts: (artifact, evidence) =>
    encodingOf(artifact) === (evidence === 'attestations' ? ATTESTATIONS : SIGNATURES).encoding,
  searched: () => 'in the legacy .sig/.att tags',
  found: (noun, count) =>
    `${count} legacy ${noun}${count === 1 ? '' : 's'} (the .sig/.att tags), which this authority does not read`,
};
