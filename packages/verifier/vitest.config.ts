import { mergeConfig } from 'vitest/config';
import { signetTestConfig } from '../../vitest.shared.ts';

export default mergeConfig(
  signetTestConfig({
    testTimeout: 30_000,
    // The real-registry files build cosign, crane and the registries on a cold machine.
    hookTimeout: 1_800_000,
    // Security-critical: held to full line and function coverage, branches nearly so.
    coverage: { lines: 100, functions: 100, statements: 99.5, branches: 99 },
    // cel-worker.ts runs in worker threads, which coverage does not see; what it does is
    // celRequestHandler in cel.ts, covered here, and it is exercised by test/policy/cel-workers.
    coverageExclude: ['src/**/index.ts', 'src/artifacts.ts', 'src/policy/cel-worker.ts'],
  }),
  // Built workspace packages load as plain Node modules: benchmarks then time the code that ships,
  // without the module runner's export getters in the hot loop.
  { test: { server: { deps: { external: [/\/packages\/[^/]+\/dist\//] } } } },
);
