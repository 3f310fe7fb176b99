import { mergeConfig } from 'vitest/config';
import { signetTestConfig } from '../../vitest.shared.ts';

export default mergeConfig(
  signetTestConfig({
    testTimeout: 30_000,
    // The real-KMS files build Vault and cosign, and install moto, on a cold machine.
    hookTimeout: 1_800_000,
    coverage: { lines: 95, functions: 95, statements: 95, branches: 85 },
    coverageExclude: ['src/**/index.ts'],
  }),
  { test: { server: { deps: { external: [/\/packages\/[^/]+\/dist\//] } } } },
);
