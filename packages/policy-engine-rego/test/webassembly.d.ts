// The part of the WebAssembly JavaScript API these tests use (TypeScript has it only with the DOM
// library, which a Node package does not load).
declare namespace WebAssembly {
  class Module {
    private constructor();
    static exports(module: Module): { readonly name: string; readonly kind: string }[];
  }
  function compile(bytes: Uint8Array): Promise<Module>;
}
