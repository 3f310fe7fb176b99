// The CUE and Rego engines of a process. Nothing is loaded until a policy in that language is
// compiled: a cluster without CUE or Rego policies pays neither start-up time nor memory, and a
// language's package (@signet/policy-engine-cue, -rego) is only looked for then.
import { DEFAULT_LIMITS, type EngineEvent, type EngineLimits, LanguageEngine } from './engine.js';
import { locateEngine } from './engine-package.js';
import { PolicyEngineError } from './errors.js';
import type { PolicyLanguage } from './languages.js';

/** The outcome of one evaluation, with upstream's wording. */
export type EngineOutcome =
  | { readonly passed: true; readonly warning?: string }
  | { readonly passed: false; readonly reason: string; readonly warning?: string };

/** A policy compiled in its engine: evaluate it any number of times, release it when replaced. */
export interface EnginePolicy {
  readonly language: PolicyLanguage;
  /**
   * Evaluates the policy over `document` (a JSON value, or its JSON text). Rejects with a
   * {@link PolicyEngineError} when the engine fails (timeout, memory, crash): an infrastructure
   * failure, not a verdict.
   */
  evaluate(document: unknown): Promise<EngineOutcome>;
  release(): void;
}

export interface CompileOptions {
  /**
   * Abandons the compile: it is dropped if it still waits for the engine, its worker terminated
   * if it runs (the next request starts a fresh one), and the call rejects with
   * `ENGINE_CANCELLED` at once.
   */
  readonly signal?: AbortSignal;
}

export interface PolicyEngines {
  /** Compiles `source`; rejects with a PolicySourceError when it does not compile. */
  compile(language: PolicyLanguage, source: string, options?: CompileOptions): Promise<EnginePolicy>;
  /** Policies compiled and not released, per language: what the engines keep. */
  programs(): Readonly<Record<PolicyLanguage, number>>;
  close(): Promise<void>;
}

export interface PolicyEnginesOptions {
  readonly limits?: Partial<EngineLimits>;
  /**
   * Where each engine's WebAssembly file is. By default, in the language's package
   * (`@signet/policy-engine-cue`, `@signet/policy-engine-rego`), imported on the first policy in
   * that language; without it, compiling one rejects with `ENGINE_NOT_INSTALLED`.
   */
  readonly wasmPath?: (language: PolicyLanguage) => string;
  readonly onEvent?: (event: EngineEvent) => void;
}

export function createPolicyEngines(options: PolicyEnginesOptions = {}): PolicyEngines {
  const limits: EngineLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const engines = new Map<PolicyLanguage, LanguageEngine>();
  const located = new Map<PolicyLanguage, Promise<LanguageEngine>>();
  let closed = false;
  const locate = async (language: PolicyLanguage): Promise<string> =>
    options.wasmPath === undefined ? locateEngine(language) : options.wasmPath(language);
  const engineFor = (language: PolicyLanguage): Promise<LanguageEngine> => {
    let engine = located.get(language);
    if (engine === undefined) {
      const created = locate(language).then((wasmPath) => {
        const started = new LanguageEngine({ language, wasmPath, limits, onEvent: options.onEvent });
        engines.set(language, started);
        return started;
      });
      // A package that was not found is looked for again by the next compile.
      created.catch(() => {
        if (located.get(language) === created) located.delete(language);
      });
      located.set(language, created);
      engine = created;
    }
    return engine;
  };
  return Object.freeze({
    async compile(
      language: PolicyLanguage,
      source: string,
      compile: CompileOptions = {},
    ): Promise<EnginePolicy> {
      if (closed) throw new PolicyEngineError('ENGINE_CLOSED', 'the policy engines are closed');
      const engine = await engineFor(language);
      if (closed) throw new PolicyEngineError('ENGINE_CLOSED', 'the policy engines are closed');
      const id = await engine.compile(source, compile.signal);
      return Object.freeze({
        language,
        async evaluate(document: unknown): Promise<EngineOutcome> {
          const input = typeof document === 'string' ? document : JSON.stringify(document);
          const answer = await engine.evaluate(id, input ?? 'null');
          const warning = answer.warning ? { warning: answer.warning } : {};
          if (answer.ok) return { passed: true, ...warning };
          return { passed: false, reason: answer.error ?? 'the policy failed', ...warning };
        },
        release: () => engine.release(id),
      });
    },
    programs() {
      return { cue: engines.get('cue')?.programs ?? 0, rego: engines.get('rego')?.programs ?? 0 };
    },
    async close(): Promise<void> {
      closed = true;
      await Promise.all([...engines.values()].map((engine) => engine.close()));
    },
  });
}
