// Each language's engine is a package of its own (ADR 26), an optional peer dependency of this
// one: users install the languages their policies are written in, and the host imports a
// language's package by name when the first policy in that language is compiled.
import { PolicyEngineError } from './errors.js';
import type { PolicyLanguage } from './languages.js';

/**
 * The engine interface this host speaks (the `signet_alloc`/`signet_call` exports and their JSON,
 * go/abi). A language package says which one its WebAssembly implements.
 */
export const ENGINE_ABI = 1;

/** The package that carries each language's engine. */
export const ENGINE_PACKAGES: Readonly<Record<PolicyLanguage, string>> = Object.freeze({
  cue: '@signet/policy-engine-cue',
  rego: '@signet/policy-engine-rego',
});

const DISPLAY_NAMES: Readonly<Record<PolicyLanguage, string>> = { cue: 'CUE', rego: 'Rego' };

/** What a language package exports as `engine`. */
export interface EnginePackage {
  readonly language: PolicyLanguage;
  readonly abi: number;
  /** Its WebAssembly file. */
  readonly wasmPath: string;
}

/** Imports a language's package (its module namespace). */
export type ImportEngine = (language: PolicyLanguage) => Promise<unknown>;

// Literal specifiers, so that tools that trace imports (bundlers, file tracers) see both.
const importEngine: ImportEngine = (language) =>
  language === 'cue' ? import('@signet/policy-engine-cue') : import('@signet/policy-engine-rego');

/**
 * The WebAssembly file of `language`'s engine, from its package. Rejects with a PolicyEngineError:
 * `ENGINE_NOT_INSTALLED` when the package is not installed, `ENGINE_UNAVAILABLE` when it does not
 * load or is not an engine this host can run.
 */
export async function locateEngine(
  language: PolicyLanguage,
  load: ImportEngine = importEngine,
): Promise<string> {
  const name = ENGINE_PACKAGES[language];
  let module: unknown;
  try {
    module = await load(language);
  } catch (error) {
    if (isMissingPackage(error, name)) {
      throw new PolicyEngineError(
        'ENGINE_NOT_INSTALLED',
        `a ${DISPLAY_NAMES[language]} policy needs ${name}; install it (npm install ${name})`,
        { cause: error },
      );
    }
    throw new PolicyEngineError('ENGINE_UNAVAILABLE', `${name} did not load: ${String(error)}`, {
      cause: error,
    });
  }
  const engine = (module as { readonly engine?: Partial<EnginePackage> } | undefined)?.engine;
  if (engine?.language !== language || typeof engine.wasmPath !== 'string') {
    throw new PolicyEngineError('ENGINE_UNAVAILABLE', `${name} does not export a ${language} engine`);
  }
  if (engine.abi !== ENGINE_ABI) {
    throw new PolicyEngineError(
      'ENGINE_UNAVAILABLE',
      `${name} implements engine interface ${String(engine.abi)}, this @signet/policy-engines speaks ${ENGINE_ABI}: install the same version of both`,
    );
  }
  return engine.wasmPath;
}

// Node words a package it cannot resolve as `Cannot find package '<name>' imported from ...`; a
// file missing inside an installed package (one not built) has the same code but names the file.
function isMissingPackage(error: unknown, name: string): boolean {
  return (
    error instanceof Error &&
    (error as { readonly code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' &&
    error.message.includes(`'${name}'`)
  );
}
