import { signetTestConfig } from '../../vitest.shared.ts';

export default signetTestConfig({
  testTimeout: 30_000,
  // The real-registry files build the registries, cosign and crane on a cold machine.
  hookTimeout: 1_800_000,
  // Security-critical (credentials, the private-address guard, digest checks): held to the
  // verifier's bar.
  coverage: { lines: 100, functions: 100, statements: 99.5, branches: 99 },
  coverageExclude: ['src/**/index.ts', 'src/artifacts.ts'],
});
