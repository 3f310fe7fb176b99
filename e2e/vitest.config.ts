import { signetTestConfig } from '../vitest.shared.ts';

// One control plane per test file, files one after another: the machines have 2 cores. The
// programs they run are built before the first test (test/global-setup.ts).
export default signetTestConfig({
  serial: true,
  testTimeout: 300_000,
  hookTimeout: 600_000,
  globalSetup: 'test/global-setup.ts',
});
