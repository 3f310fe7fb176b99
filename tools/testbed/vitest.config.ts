import { signetTestConfig } from '../../vitest.shared.ts';

// The tools these tests run are built before the first test (test/global-setup.ts); the tests of
// the build itself compile small throwaway modules, and one installs python-tuf into an empty cache.
export default signetTestConfig({
  testTimeout: 120_000,
  hookTimeout: 300_000,
  serial: true,
  globalSetup: 'test/global-setup.ts',
});
