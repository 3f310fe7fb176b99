// The CUE engine that @signet/policy-engines runs: cuelang.org/go compiled to WebAssembly
// (wasip1) by packages/policy-engines/scripts/build-engines.ts into engines/cue.wasm. The host
// imports this package by name on the first CUE policy it compiles (ADR 26); importing it
// only names the file.
import { fileURLToPath } from 'node:url';

/** What the host loads: the language, the engine interface the module implements, the module. */
export interface CueEngine {
  readonly language: 'cue';
  /** The host interface (`signet_alloc`, `signet_call` and their JSON) the module implements. */
  readonly abi: 1;
  /** `engines/cue.wasm` in this package; its size and SHA-256 are in `engines/manifest.json`. */
  readonly wasmPath: string;
}

export const engine: CueEngine = Object.freeze({
  language: 'cue',
  abi: 1,
  wasmPath: fileURLToPath(new URL('../engines/cue.wasm', import.meta.url)),
});
