/** RFC 6901 pointer for a list of keys: `['a', 'b/c']` -> `/a/b~1c`. */
export function jsonPointer(keys: readonly string[]): string {
  let pointer = '';
  for (const key of keys) pointer += `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
  return pointer;
}
