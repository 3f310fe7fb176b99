import { signetTestConfig } from '../../vitest.shared.ts';

export default signetTestConfig({
  testTimeout: 30_000,
  // Starting registries, moto and the proxy, and signing with cosign; what they run is built and
  // installed before the first test (test/global-setup.ts), never inside a hook.
  hookTimeout: 300_000,
  globalSetup: 'test/global-setup.ts',
  // Security-critical (credentials, the private-address guard, digest checks): held to the
  // verifier's bar.
  coverage: { lines: 100, functions: 100, statements: 99.5, branches: 99 },
  coverageExclude: ['src/**/index.ts', 'src/artifacts.ts', 'src/references.ts'],
});
