import { mergeConfig } from 'vitest/config';
import { signetTestConfig } from '../../vitest.shared.ts';

export default mergeConfig(
  signetTestConfig({
    // A first KMS call loads its SDK: on a loaded machine that alone took over 10 s once.
    testTimeout: 60_000,
    // Starting moto, the Vault stand-in, a registry and signing with cosign; what they run is built
    // and installed before the first test (test/global-setup.ts), never inside a hook.
    hookTimeout: 300_000,
    globalSetup: 'test/global-setup.ts',
    // Error paths of the cloud SDK providers are only partly reached by the real-server tests.
    coverage: { lines: 90, functions: 95, statements: 85, branches: 65 },
    coverageExclude: ['src/**/index.ts'],
  }),
  { test: { server: { deps: { external: [/\/packages\/[^/]+\/dist\//] } } } },
);
