// Rewrites a JSON tree into a semantically equal one: keys in another order, empty lists and maps
// swapped for `null` or dropped, and extra keys holding empty values. Lists keep their order and
// type (an empty list never becomes a map). Deterministic for a seed, so fast-check can replay it.

const DROP = Symbol('drop');

export function reshape<T>(value: T, seed: number): T {
  const random = mulberry32(seed);
  return reshapeValue(value, random) as T;
}

function reshapeValue(value: unknown, random: () => number): unknown {
  if (Array.isArray(value)) return value.map((item) => reshapeValue(item, random));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of shuffled(Object.keys(value), random)) {
    const item = (value as Record<string, unknown>)[key];
    const next = isEmpty(item) ? emptyVariant(item, random) : reshapeValue(item, random);
    // defineProperty: a `__proto__` key must stay data, not become the copy's prototype.
    if (next !== DROP)
      Object.defineProperty(out, key, { value: next, enumerable: true, writable: true, configurable: true });
  }
  if (random() < 0.2)
    out[`x-empty-${Math.floor(random() * 1000)}`] = [null, [], {}][Math.floor(random() * 3)];
  return out;
}

/** Another spelling of an empty value, of the same type: `[]` -> `null` | dropped | `[]`. */
function emptyVariant(value: unknown, random: () => number): unknown {
  // `null` has no type left to keep: it stays null or goes.
  if (value === null || value === undefined) return random() < 0.5 ? DROP : null;
  const same = Array.isArray(value) ? [] : {};
  return [DROP, null, same][Math.floor(random() * 3)];
}

/** Independent of the code under test: null, missing, `[]`, or a map of empty values. */
function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value !== 'object') return false;
  return Object.values(value).every(isEmpty);
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
