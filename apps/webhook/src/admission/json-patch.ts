// Applies the JSON patches Signet's mutating endpoint produces (RFC 6902 `test` and `replace`
// of string fields), as the API server would, so `signet verify` validates what would be stored.
import type { KubeObject } from '@signet/k8s-types';

interface Operation {
  readonly op: string;
  readonly path: string;
  readonly value?: unknown;
}

/** `object` with `patch` (base64 JSON) applied; throws when a `test` fails or an op is unknown. */
export function applyPatch(object: KubeObject, patch: string): KubeObject {
  const operations = JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as Operation[];
  const copy = structuredClone(object) as Record<string, unknown>;
  for (const operation of operations) {
    const keys = operation.path.split('/').slice(1).map(unescapeKey);
    const last = keys.pop();
    let parent: unknown = copy;
    for (const key of keys) parent = (parent as Record<string, unknown>)[key];
    if (typeof parent !== 'object' || parent === null || last === undefined)
      throw new Error(`patch path ${operation.path} does not exist`);
    const holder = parent as Record<string, unknown>;
    if (operation.op === 'test') {
      if (holder[last] !== operation.value) throw new Error(`patch test failed at ${operation.path}`);
    } else if (operation.op === 'replace') {
      holder[last] = operation.value;
    } else {
      throw new Error(`unexpected patch operation ${operation.op}`);
    }
  }
  return copy as KubeObject;
}

function unescapeKey(key: string): string {
  return key.replaceAll('~1', '/').replaceAll('~0', '~');
}
