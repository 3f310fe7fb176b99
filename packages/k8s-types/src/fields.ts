// Small, allocation-light readers for validating parsed JSON at the boundary. Each reader takes
// the path of the value it reads and a `fail` callback that throws the caller's own error type.

export type JsonObject = Record<string, unknown>;
export type Fail = (path: string, problem: string) => never;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function join(parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`;
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

export function expectObject(value: unknown, path: string, fail: Fail): JsonObject {
  if (!isObject(value)) fail(path, `must be an object, got ${describe(value)}`);
  return value as JsonObject;
}

export function requiredString(obj: JsonObject, key: string, path: string, fail: Fail): string {
  const value = obj[key];
  if (typeof value !== 'string') {
    fail(
      join(path, key),
      value === undefined ? 'required string' : `must be a string, got ${describe(value)}`,
    );
  }
  return value as string;
}

export function optionalString(obj: JsonObject, key: string, path: string, fail: Fail): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') fail(join(path, key), `must be a string, got ${describe(value)}`);
  return value as string;
}

export function optionalBoolean(obj: JsonObject, key: string, path: string, fail: Fail): boolean | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') fail(join(path, key), `must be a boolean, got ${describe(value)}`);
  return value as boolean;
}

export function optionalObject(
  obj: JsonObject,
  key: string,
  path: string,
  fail: Fail,
): JsonObject | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  return expectObject(value, join(path, key), fail);
}

/** Reads an optional list; `null` and a missing key both give an empty list. */
export function optionalList<T>(
  obj: JsonObject,
  key: string,
  path: string,
  fail: Fail,
  item: (value: unknown, path: string) => T,
): T[] {
  const value = obj[key];
  if (value === undefined || value === null) return [];
  const listPath = join(path, key);
  if (!Array.isArray(value)) fail(listPath, `must be a list, got ${describe(value)}`);
  const list = value as unknown[];
  const out = new Array<T>(list.length);
  for (let i = 0; i < list.length; i++) out[i] = item(list[i], `${listPath}[${i}]`);
  return out;
}

export function stringItem(fail: Fail): (value: unknown, path: string) => string {
  return (value, path) => {
    if (typeof value !== 'string') fail(path, `must be a string, got ${describe(value)}`);
    return value as string;
  };
}
