// Sigstore bundles attached to the image as OCI 1.1 referrers (what cosign 3 writes by default),
// read through the referrers API or its fallback tag. A signature is a DSSE statement with cosign's
// signing predicate type, an attestation one with any other; the referrer's predicate-type
// annotation, when present, says which before anything is verified.
import { COSIGN_SIGN_PREDICATE_TYPE } from '../sigstore/payload.js';
import type { FormatQuery, SignatureFormat } from './format.js';
import { encodingOf } from './format.js';

/** Prefix of every Sigstore bundle media type (`...bundle.v0.3+json`, `...bundle+json;version=0.1`). */
export const SIGSTORE_BUNDLE_PREFIX = 'application/vnd.dev.sigstore.bundle';
/** The annotation cosign puts on a bundle referrer. */
export const BUNDLE_PREDICATE_TYPE_ANNOTATION = 'dev.sigstore.bundle.predicateType';

const BUNDLES: FormatQuery = {
  query: {
    kind: 'referrers',
    artifactType: { startsWith: SIGSTORE_BUNDLE_PREFIX },
    confirmedAs: 'Sigstore bundle',
    layers: { pick: 'one', mediaTypePrefix: SIGSTORE_BUNDLE_PREFIX, name: 'bundle' },
  },
  encoding: 'bundle',
  read: ({ source, bytes, manifestAnnotations, artifactType }) => ({
    format: 'bundle',
    source,
    bundle: bytes,
    artifactType,
    predicateType: manifestAnnotations[BUNDLE_PREDICATE_TYPE_ANNOTATION],
  }),
};

export const bundleFormat: SignatureFormat = {
  name: 'bundle',
  queries: () => [BUNDLES],
  counts: (artifact, evidence) => {
    if (encodingOf(artifact) !== 'bundle') return false;
    // Unsigned hint only: a signature authority skips bundles announced as other attestations.
    const predicateType = artifact.format === 'bundle' ? artifact.predicateType : undefined;
    return (
      evidence === 'attestations' ||
      predicateType === undefined ||
      predicateType === COSIGN_SIGN_PREDICATE_TYPE
    );
  },
  searched: () => 'as a Sigstore bundle (signatureFormat: bundle)',
  found: (_noun, count) =>
    `${count} Sigstore bundle${count === 1 ? '' : 's'} (what cosign 3 writes by default), which count only with signatureFormat: bundle`,
};
