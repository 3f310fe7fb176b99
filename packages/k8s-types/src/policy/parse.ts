// What the parsers of the three policy objects share: the error type per object, metadata, string
// maps, enums, and `compact`, which builds a typed object from fields that may be absent.
import { PolicyParseError } from '../errors.js';
import {
  describe,
  expectObject,
  type Fail,
  isObject,
  type JsonObject,
  join,
  optionalList,
  optionalObject,
  optionalString,
  requiredString,
} from '../fields.js';
import type { PolicyObjectMeta } from './types.js';

/** Fields of `T`, each possibly `undefined`; `compact` drops those (exact optional properties). */
export type Fields<T> = { readonly [K in keyof T]-?: T[K] | undefined };

/** Builds `T` from `fields`, leaving out the absent ones, so `{ x?: string }` never holds `x: undefined`. */
export function compact<T>(fields: Fields<T>): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out as T;
}

/** Reads `key` as one of `allowed`; an empty string counts as absent, as in the Go types. */
export function optionalEnum<const A extends string>(
  obj: JsonObject,
  key: string,
  path: string,
  fail: Fail,
  allowed: readonly A[],
): A | undefined {
  const value = optionalString(obj, key, path, fail);
  if (value === undefined || value === '') return undefined;
  if (!isOneOf(value, allowed)) {
    fail(join(path, key), `must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value;
}

export function isOneOf<const A extends string>(value: string, allowed: readonly A[]): value is A {
  return (allowed as readonly string[]).includes(value);
}

/** The `fail` callback of one object's parse: a {@link PolicyParseError} naming the object. */
export function failFor(object: string | undefined): Fail {
  return (path, problem) => {
    throw new PolicyParseError(object, path, problem);
  };
}

/** `Kind/name` for error messages, when the body has a readable name. */
export function objectLabel(kind: string, body: unknown): string | undefined {
  const name = isObject(body) && isObject(body.metadata) ? body.metadata.name : undefined;
  return typeof name === 'string' ? `${kind}/${name}` : undefined;
}

export function parseMetadata(body: JsonObject, fail: Fail): PolicyObjectMeta {
  if (body.metadata === undefined || body.metadata === null) fail('metadata', 'required object');
  const meta = expectObject(body.metadata, 'metadata', fail);
  const name = requiredString(meta, 'name', 'metadata', fail);
  if (name === '') fail('metadata.name', 'must not be empty');
  const generation = meta.generation;
  if (generation !== undefined && generation !== null) {
    if (typeof generation !== 'number' || !Number.isInteger(generation)) {
      fail('metadata.generation', `must be an integer, got ${describe(generation)}`);
    }
  }
  return compact<PolicyObjectMeta>({
    name,
    uid: optionalString(meta, 'uid', 'metadata', fail),
    resourceVersion: optionalString(meta, 'resourceVersion', 'metadata', fail),
    generation: typeof generation === 'number' ? generation : undefined,
    labels: stringMap(meta, 'labels', 'metadata', fail),
    annotations: stringMap(meta, 'annotations', 'metadata', fail),
  });
}

export function stringMap(
  obj: JsonObject,
  key: string,
  path: string,
  fail: Fail,
): Record<string, string> | undefined {
  const map = optionalObject(obj, key, path, fail);
  if (map === undefined) return undefined;
  const mapPath = join(path, key);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(map)) {
    if (typeof v !== 'string') fail(join(mapPath, k), `must be a string, got ${describe(v)}`);
    out[k] = v as string;
  }
  return out;
}

/** A list field kept absent when the object leaves it out (or null), so the parsed object says what was written. */
export function listIfPresent<T>(
  obj: JsonObject,
  key: string,
  path: string,
  fail: Fail,
  item: (value: unknown, path: string) => T,
): T[] | undefined {
  return obj[key] == null ? undefined : optionalList(obj, key, path, fail, item);
}

/** Requires `spec` to be an object. */
export function specOf(root: JsonObject, fail: Fail): JsonObject {
  if (root.spec === undefined || root.spec === null) fail('spec', 'required object');
  return expectObject(root.spec, 'spec', fail);
}
