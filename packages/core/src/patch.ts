// RFC 6902 JSON patches that pin image tags to digests. A patch only ever touches the fields the
// decision planned (`VerifyDecision.mutations`), and each replacement is guarded by a `test` of
// the value that was resolved, so a concurrent change makes the API server reject the patch
// instead of pinning the wrong image.
import type { AdmissionDecision } from './decide.js';
import { withDigest } from './reference.js';

export type JsonPatchOperation =
  | { readonly op: 'test'; readonly path: string; readonly value: string }
  | { readonly op: 'replace'; readonly path: string; readonly value: string };

/**
 * The patch that pins every planned image field whose digest is known. `digests` maps a field
 * path (`ImageTarget.path`) to the digest its image resolved to (`sha256:...`); entries for fields
 * the decision did not plan are never read. Throws `InvalidReferenceError` for a malformed digest.
 */
export function digestPatch(
  decision: AdmissionDecision,
  digests: ReadonlyMap<string, string>,
): JsonPatchOperation[] {
  if (decision.action !== 'verify') return [];
  const operations: JsonPatchOperation[] = [];
  for (const target of decision.mutations) {
    const digest = digests.get(target.path);
    if (digest === undefined) continue;
    operations.push(
      { op: 'test', path: target.pointer, value: target.image },
      { op: 'replace', path: target.pointer, value: withDigest(target.image, digest) },
    );
  }
  return operations;
}
