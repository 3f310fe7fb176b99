// Sigstore bundles attached to the image as OCI 1.1 referrers (what cosign 3 writes by default),
// read through the referrers API or its fallback tag. A signature is a DSSE statement with cosign's
// signing predicate type, an attestation one with any other; the referrer's predicate-type
// annotation, when present, says which before anything is verified.

import type { ListedAnnotationMatch, ReferrersQuery } from '@signet/registry';
import { COSIGN_SIGN_PREDICATE_TYPE } from '../sigstore/payload.js';
import type { FormatQuery, SignatureFormat } from './format.js';
import { encodingOf } from './format.js';

/** Prefix of every Sigstore bundle media type (`...bundle.v0.3+json`, `...bundle+json;version=0.1`). */
export const SIGSTORE_BUNDLE_PREFIX = 'application/vnd.dev.sigstore.bundle';
/** The annotation cosign puts on a bundle referrer. */
export const BUNDLE_PREDICATE_TYPE_ANNOTATION = 'dev.sigstore.bundle.predicateType';

const BUNDLE_REFERRERS: ReferrersQuery = {
  kind: 'referrers',
  artifactType: { startsWith: SIGSTORE_BUNDLE_PREFIX },
  confirmedAs: 'Sigstore bundle',
  layers: { pick: 'one', mediaTypePrefix: SIGSTORE_BUNDLE_PREFIX, name: 'bundle' },
};

/**
 * Bundles whose listing announces another predicate type than `evidence` can count are never
 * fetched (a signature authority skips the SBOMs and provenance beside the signature); those
 * listed without one are read and judged by their statement.
 */
const bundles = (skipListed: ListedAnnotationMatch): FormatQuery => ({
  query: { ...BUNDLE_REFERRERS, skipListed },
  encoding: 'bundle',
  read: ({ source, bytes, manifestAnnotations, artifactType }) => ({
    format: 'bundle',
    source,
    bundle: bytes,
    artifactType,
    predicateType: manifestAnnotations[BUNDLE_PREDICATE_TYPE_ANNOTATION],
  }),
});

const SIGNATURE_BUNDLES = bundles({
  annotation: BUNDLE_PREDICATE_TYPE_ANNOTATION,
  differsFrom: COSIGN_SIGN_PREDICATE_TYPE,
});
const ATTESTATION_BUNDLES = bundles({
  annotation: BUNDLE_PREDICATE_TYPE_ANNOTATION,
  equals: COSIGN_SIGN_PREDICATE_TYPE,
});

export const bundleFormat: SignatureFormat = {
  name: 'bundle',
  queries: (evidence) => [evidence === 'attestations' ? ATTESTATION_BUNDLES : SIGNATURE_BUNDLES],
  counts: (artifact, evidence) => {
    if (encodingOf(artifact) !== 'bundle') return false;
    // Unsigned hint only: an authority skips bundles announced as the other kind of evidence.
    const predicateType = artifact.format === 'bundle' ? artifact.predicateType : undefined;
    if (predicateType === undefined) return true;
    return (predicateType === COSIGN_SIGN_PREDICATE_TYPE) === (evidence === 'signatures');
  },
  searched: () => 'as a Sigstore bundle',
  found: (_noun, count) =>
    `${count} Sigstore bundle${count === 1 ? '' : 's'} (what cosign 3 writes by default), which this authority does not read`,
};
