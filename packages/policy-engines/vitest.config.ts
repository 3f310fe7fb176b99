import { signetTestConfig } from '../../vitest.shared.ts';

// The worker runs in its own thread (its coverage is not collected); the host side is held high.
export default signetTestConfig({
  testTimeout: 30_000,
  coverage: { lines: 95, functions: 95, statements: 95, branches: 85 },
  coverageExclude: ['src/**/index.ts', 'src/worker.ts', 'src/protocol.ts'],
});
