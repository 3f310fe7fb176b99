export { DEFAULT_LIMITS, type EngineEvent, type EngineLimits } from './engine.js';
export {
  type CompileOptions,
  createPolicyEngines,
  type EngineOutcome,
  type EnginePolicy,
  type PolicyEngines,
  type PolicyEnginesOptions,
} from './engines.js';
export { PolicyEngineError, type PolicyEngineErrorCode, PolicySourceError } from './errors.js';
export { isPolicyLanguage, POLICY_LANGUAGES, type PolicyLanguage } from './languages.js';
export { WasmFormatError, withMemoryLimit } from './wasm-limits.js';
