/** The policy languages of policy-controller that run in a WebAssembly engine. */
export type PolicyLanguage = 'cue' | 'rego';

export const POLICY_LANGUAGES: readonly PolicyLanguage[] = ['cue', 'rego'];

export function isPolicyLanguage(value: string): value is PolicyLanguage {
  return (POLICY_LANGUAGES as readonly string[]).includes(value);
}
