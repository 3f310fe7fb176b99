// The Secrets and ConfigMaps a namespace's ImagePolicies read (`secretRef` keys and CA
// certificates, `configMapRef` policies), found in the objects as stored, parsed or not: on a
// cluster Signet reads exactly these, by name, in the ImagePolicy's own namespace, and nothing else
// of a team's namespace (ADR 0028).
import { isObject } from '@signet/k8s-types';

export interface InputReference {
  readonly kind: 'Secret' | 'ConfigMap';
  readonly namespace: string;
  readonly name: string;
}

/** How deep into a spec references are looked for (an authority's attestation's policy is at 6). */
const MAX_DEPTH = 12;

const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** `Secret/ns/name`: a reference as one string (sets, sorting, logs). */
export function referenceKey(reference: InputReference): string {
  return `${reference.kind}/${reference.namespace}/${reference.name}`;
}

/**
 * What `object` (an ImagePolicy as the API server stores it) references in its own namespace. A
 * reference to another namespace is left out: the parser refuses such a policy, and the compiler
 * never looks outside the policy's namespace. Names that no Secret or ConfigMap can have are left
 * out too.
 */
export function referencedInputs(object: unknown): InputReference[] {
  if (!isObject(object) || !isObject(object.metadata)) return [];
  const namespace = object.metadata.namespace;
  if (typeof namespace !== 'string' || namespace === '') return [];
  const found = new Map<string, InputReference>();
  const pending: { value: unknown; depth: number }[] = [{ value: object.spec, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    for (const [key, inner] of entriesOf(next.value, next.depth)) {
      const kind = REFERENCE_KINDS.get(key);
      const reference = kind === undefined ? undefined : referenceIn(inner, kind, namespace);
      if (reference) found.set(referenceKey(reference), reference);
      else if (kind === undefined) pending.push({ value: inner, depth: next.depth + 1 });
    }
  }
  return [...found.values()];
}

const REFERENCE_KINDS: ReadonlyMap<string, InputReference['kind']> = new Map([
  ['secretRef', 'Secret'],
  ['configMapRef', 'ConfigMap'],
]);

/** The fields of an object or the items of an array (keyed ''), none beyond the depth bound. */
function entriesOf(value: unknown, depth: number): [string, unknown][] {
  if (depth > MAX_DEPTH) return [];
  if (Array.isArray(value)) return value.map((item): [string, unknown] => ['', item]);
  return isObject(value) ? Object.entries(value) : [];
}

function referenceIn(
  ref: unknown,
  kind: InputReference['kind'],
  namespace: string,
): InputReference | undefined {
  if (!isObject(ref) || typeof ref.name !== 'string' || !NAME.test(ref.name)) return undefined;
  const written = ref.namespace;
  if (written !== undefined && written !== '' && written !== namespace) return undefined;
  return { kind, namespace, name: ref.name };
}

/** Every reference of `objects` (ImagePolicies), each once, sorted. */
export function referencedInputsOf(objects: readonly unknown[]): InputReference[] {
  const all = new Map<string, InputReference>();
  for (const object of objects)
    for (const reference of referencedInputs(object)) all.set(referenceKey(reference), reference);
  return [...all.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
}
