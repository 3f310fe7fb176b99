import { signetTestConfig } from '../../vitest.shared.ts';

// Compiling the engine's module (tens of MiB) takes a few seconds on a loaded machine.
export default signetTestConfig({
  testTimeout: 60_000,
  coverage: { lines: 100, functions: 100, statements: 100, branches: 100 },
});
