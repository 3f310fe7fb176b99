import { fileURLToPath } from 'node:url';

/** The policy languages of policy-controller that run in a WebAssembly engine. */
export type PolicyLanguage = 'cue' | 'rego';

export const POLICY_LANGUAGES: readonly PolicyLanguage[] = ['cue', 'rego'];

export function isPolicyLanguage(value: string): value is PolicyLanguage {
  return (POLICY_LANGUAGES as readonly string[]).includes(value);
}

/** `engines/<language>.wasm` in this package, written by its build (`scripts/build-engines.ts`). */
export function enginePath(language: PolicyLanguage): string {
  return fileURLToPath(new URL(`../engines/${language}.wasm`, import.meta.url));
}
