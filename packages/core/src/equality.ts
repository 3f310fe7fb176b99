// Semantic equality of JSON trees, as the admission contract defines it for pod templates:
// `null`, a missing key, an empty list and an empty map are the same value; key order never
// matters; list order does. Written as one allocation-free walk because it runs on every UPDATE.

type JsonMap = Readonly<Record<string, unknown>>;

/** True when `a` and `b` are the same JSON value under the contract's rules. */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return isSemanticallyEmpty(a) && isSemanticallyEmpty(b);
  }
  const aIsList = Array.isArray(a);
  if (aIsList !== Array.isArray(b)) return isSemanticallyEmpty(a) && isSemanticallyEmpty(b);
  return aIsList
    ? listsEqual(a as readonly unknown[], b as readonly unknown[])
    : mapsEqual(a as JsonMap, b as JsonMap);
}

/**
 * True for `undefined`, `null`, `[]`, and a map whose every value is empty (`{}`,
 * `{resources: {}}`): each is what a missing field serializes to somewhere.
 */
export function isSemanticallyEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.length === 0;
  for (const key in value) {
    if (!isSemanticallyEmpty((value as JsonMap)[key])) return false;
  }
  return true;
}

function listsEqual(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (!semanticEqual(a[i], b[i])) return false;
  }
  return true;
}

function mapsEqual(a: JsonMap, b: JsonMap): boolean {
  for (const key in a) {
    // hasOwn: a key such as `__proto__` must not read the prototype of `b`.
    if (!semanticEqual(a[key], Object.hasOwn(b, key) ? b[key] : undefined)) return false;
  }
  for (const key in b) {
    if (!Object.hasOwn(a, key) && !isSemanticallyEmpty(b[key])) return false;
  }
  return true;
}
