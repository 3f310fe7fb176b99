import { mergeConfig } from 'vitest/config';
import { signetTestConfig } from '../../vitest.shared.ts';

export default mergeConfig(
  // @signet/core is security-critical: every line and branch is covered, or the run fails.
  signetTestConfig({ coverage: { lines: 100, branches: 100, functions: 100, statements: 100 } }),
  // Built workspace packages load as plain Node modules: benchmarks then time the code that ships,
  // without the module runner's export getters in the hot loop.
  { test: { server: { deps: { external: [/\/packages\/[^/]+\/dist\//] } } } },
);
