import { signetTestConfig } from '../../vitest.shared.ts';

// The worker runs in its own thread (its coverage is not collected); the host side is held high.
export default signetTestConfig({
  testTimeout: 30_000,
  coverage: { lines: 90, functions: 85, statements: 90, branches: 80 },
  coverageExclude: ['src/**/index.ts', 'src/worker.ts', 'src/thread-niceness.ts', 'src/protocol.ts'],
});
