// Which signatures a policy needs when a Pod names an image index (a multi-architecture image):
// Signet's annotation `signet.dev/index-signatures` on a ClusterImagePolicy or ImagePolicy.
// Without it, policy-controller's behaviour: cosign verifies the digest it is given, so only what
// is attached to the index's own digest counts, and an index whose platform manifests alone are
// signed (as tools other than `cosign sign --recursive` sign them) is denied.
import type { PolicySite } from './errors.js';
import { PolicyCompileError } from './errors.js';

/** The annotation, on the policy object's metadata. */
export const INDEX_SIGNATURES_ANNOTATION = 'signet.dev/index-signatures';

/**
 * - `index`: the signatures and attestations of the index's own digest (the default, as upstream);
 * - `platforms`: those of every platform manifest the index lists, each passing the policy on its own;
 * - `index-or-platforms`: either;
 * - `index-and-platforms`: both (what `cosign sign --recursive` makes).
 * An image that is not an index is judged by its own digest whatever the policy says.
 */
export type IndexSignatures = 'index' | 'platforms' | 'index-or-platforms' | 'index-and-platforms';

const VALUES: readonly IndexSignatures[] = [
  'index',
  'platforms',
  'index-or-platforms',
  'index-and-platforms',
];

/** What `annotations` ask for; a value it does not take is a compile error naming the annotation. */
export function indexSignaturesOf(
  policy: string,
  annotations: Readonly<Record<string, string>> | undefined,
): IndexSignatures {
  const value = annotations?.[INDEX_SIGNATURES_ANNOTATION];
  if (value === undefined) return 'index';
  const known = VALUES.find((candidate) => candidate === value);
  if (known !== undefined) return known;
  const site: PolicySite = {
    policy,
    path: `metadata.annotations[${JSON.stringify(INDEX_SIGNATURES_ANNOTATION)}]`,
    label: 'annotation',
  };
  throw new PolicyCompileError(
    'INVALID_ANNOTATION',
    site,
    `${JSON.stringify(value)} is not one of ${VALUES.join(', ')}`,
  );
}
