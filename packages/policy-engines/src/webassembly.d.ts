// The part of the WebAssembly JavaScript API this package uses. TypeScript ships these types only
// with the DOM library, which a Node package does not load.
declare namespace WebAssembly {
  class Module {
    constructor(bytes: Uint8Array);
  }
  class Memory {
    readonly buffer: ArrayBuffer;
  }
  type Imports = Record<string, Record<string, unknown>>;
  class Instance {
    constructor(module: Module, imports?: Imports);
    readonly exports: Record<string, unknown>;
  }
  function compile(bytes: Uint8Array): Promise<Module>;
  function validate(bytes: Uint8Array): boolean;
}
