// Hostile AdmissionReviews, made from real ones: the shapes the API server sends, then broken in
// the ways an attacker (or a bug) would break them. Deterministic for a seed, so a failure can be
// replayed. Used by the short fuzz test in `pnpm test` and by `pnpm soak`.
import { readFileSync } from 'node:fs';

const FIXTURES = new URL('../../../packages/k8s-types/test/fixtures/', import.meta.url);
const SEEDS = [
  'pod-create.json',
  'replicaset-scale-down.json',
  'cronjob-create.json',
  'pod-ephemeralcontainers.json',
  'deployment-status.json',
  'pod-delete.json',
].map((name) => readFileSync(new URL(name, FIXTURES), 'utf8'));

/** A small, seedable PRNG (mulberry32): the same seed gives the same reviews. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Json = unknown;

const STRANGE_VALUES: readonly Json[] = [
  null,
  true,
  0,
  -1,
  1e308,
  '',
  'x'.repeat(70_000),
  '\u0000',
  '\ud800',
  '../../etc/passwd',
  '[object Object]',
  [],
  [null],
  {},
  { __proto__: { polluted: true } },
  { constructor: { prototype: { polluted: true } } },
  'CREATE',
  'UPDATE',
  'DELETE',
  'pods',
  'ephemeralcontainers',
  'status',
  'scale',
  'Pod',
  'EphemeralContainers',
  `registry.example/app@sha256:${'a'.repeat(64)}`,
  'registry.example:443/app:v1',
  'UPPER/Case:tag',
  `a@sha256:${'g'.repeat(64)}`,
];

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)] as T;
}

/** Every path to a value of the tree, as keys. */
function paths(
  value: Json,
  prefix: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  out.push(prefix);
  if (out.length > 400) return out;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) paths(item, [...prefix, i], out);
  } else if (value !== null && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) paths(item, [...prefix, key], out);
  return out;
}

function setAt(root: Json, path: readonly (string | number)[], value: Json | undefined): Json {
  if (path.length === 0) return value;
  let node = root as Record<string | number, Json>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, Json>;
  const last = path.at(-1) as string | number;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return root;
}

/** A copy of the tree, or null when it is nested too deeply to copy (an earlier mutation's doing). */
function cloneOrNull(tree: Json): Json {
  try {
    return structuredClone(tree);
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw error;
  }
}

function nested(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

/** One hostile review body. */
export function fuzzedReview(rand: () => number): Buffer {
  const seed = pick(rand, SEEDS);
  const roll = rand();
  if (roll < 0.05) return Buffer.from(seed.slice(0, Math.floor(rand() * seed.length)));
  if (roll < 0.08)
    return Buffer.from(Array.from({ length: Math.floor(rand() * 4096) }, () => Math.floor(rand() * 256)));
  if (roll < 0.1)
    return Buffer.from(
      seed.replace('"request": {', `"request": ${nested(1 + Math.floor(rand() * 200_000))}, "x": {`),
    );
  if (roll < 0.12) return Buffer.from(seed.replace('"uid"', '"uid": "dup", "uid"'));
  let tree = JSON.parse(seed) as Json;
  const mutations = 1 + Math.floor(rand() * 4);
  for (let i = 0; i < mutations; i++) {
    const path = pick(rand, paths(tree));
    const action = rand();
    if (action < 0.5) tree = setAt(tree, path, structuredClone(pick(rand, STRANGE_VALUES)));
    else if (action < 0.7 && path.length > 0) tree = setAt(tree, path, undefined);
    else if (action < 0.85) tree = setAt(tree, path, [cloneOrNull(tree)]);
    else tree = setAt(tree, path, JSON.parse(nested(1 + Math.floor(rand() * 2000))));
  }
  return Buffer.from(JSON.stringify(tree) ?? 'null');
}

/**
 * Whether an answer is one the API server can use: 200 with an AdmissionReview whose response
 * has a string uid and a boolean `allowed`, or a 4xx/503 carrying an AdmissionReview too.
 */
export function wellFormed(status: number, body: string): boolean {
  if (status !== 200 && !(status >= 400 && status < 500) && status !== 503) return false;
  try {
    const review = JSON.parse(body) as {
      apiVersion?: unknown;
      kind?: unknown;
      response?: { uid?: unknown; allowed?: unknown };
    };
    return (
      review.apiVersion === 'admission.k8s.io/v1' &&
      review.kind === 'AdmissionReview' &&
      typeof review.response?.uid === 'string' &&
      typeof review.response.allowed === 'boolean' &&
      (status === 200 || review.response.allowed === false)
    );
  } catch {
    return false;
  }
}
