// The Rego engine that @signet/policy-engines runs: github.com/open-policy-agent/opa compiled to WebAssembly
// (wasip1) by packages/policy-engines/scripts/build-engines.ts into engines/rego.wasm. The host
// imports this package by name on the first Rego policy it compiles (ADR 26); importing it
// only names the file.
import { fileURLToPath } from 'node:url';

/** What the host loads: the language, the engine interface the module implements, the module. */
export interface RegoEngine {
  readonly language: 'rego';
  /** The host interface (`signet_alloc`, `signet_call` and their JSON) the module implements. */
  readonly abi: 1;
  /** `engines/rego.wasm` in this package; its size and SHA-256 are in `engines/manifest.json`. */
  readonly wasmPath: string;
}

export const engine: RegoEngine = Object.freeze({
  language: 'rego',
  abi: 1,
  wasmPath: fileURLToPath(new URL('../engines/rego.wasm', import.meta.url)),
});
