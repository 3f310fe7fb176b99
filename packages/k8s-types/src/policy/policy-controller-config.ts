// The `config-policy-controller` ConfigMap: cluster-wide switches, with upstream's defaults.
import { expectObject, join, optionalString } from '../fields.js';
import { failFor, optionalEnum } from './parse.js';
import type { PolicyControllerConfig } from './types.js';

const TRUE_WORDS: ReadonlySet<string> = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE_WORDS: ReadonlySet<string> = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/**
 * Reads the `data` of the `config-policy-controller` ConfigMap. Missing keys take the upstream
 * defaults (`no-match-policy: deny`, `fail-on-empty-authorities: true`, `enable-oci11: false`);
 * booleans accept what Go's `strconv.ParseBool` accepts.
 */
export function parsePolicyControllerConfig(data: unknown): PolicyControllerConfig {
  const fail = failFor('ConfigMap/config-policy-controller');
  const map = data === undefined || data === null ? {} : expectObject(data, 'data', fail);
  const noMatch = optionalEnum(map, 'no-match-policy', 'data', fail, ['deny', 'warn', 'allow']);
  const bool = (key: string, fallback: boolean): boolean => {
    const value = optionalString(map, key, 'data', fail);
    if (value === undefined || value === '') return fallback;
    if (TRUE_WORDS.has(value)) return true;
    if (FALSE_WORDS.has(value)) return false;
    return fail(join('data', key), `must be true or false, got ${JSON.stringify(value)}`);
  };
  return {
    noMatchPolicy: noMatch ?? 'deny',
    failOnEmptyAuthorities: bool('fail-on-empty-authorities', true),
    enableOCI11: bool('enable-oci11', false),
  };
}
