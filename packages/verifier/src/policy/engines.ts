// What the verifier needs of a CUE/Rego engine host. `@signet/policy-engines` provides one; the
// verifier depends only on this shape, so its users who have no CUE or Rego policy never load
// (or install) the engines.

export type EngineLanguage = 'cue' | 'rego';

/** The outcome of one evaluation, worded as policy-controller words it. */
export type EngineOutcome =
  | { readonly passed: true; readonly warning?: string }
  | { readonly passed: false; readonly reason: string; readonly warning?: string };

/** A policy compiled in its engine. */
export interface EngineProgram {
  /** Rejects when the engine itself fails (deadline, memory, crash): nothing was judged. */
  evaluate(document: unknown): Promise<EngineOutcome>;
}

export interface PolicyEngineHost {
  /**
   * Compiles `source`. Rejects with an error named `PolicySourceError` when the policy does not
   * compile, with any other error when the engine fails.
   */
  compile(language: EngineLanguage, source: string): Promise<EngineProgram>;
}

/**
 * Fetches a `remote` policy: resolves to its text once its SHA-256 is `sha256`, rejects with a
 * readable reason otherwise. Called when a policy is compiled, never per admission.
 */
export type RemotePolicyFetch = (url: string, sha256: string) => Promise<string>;
