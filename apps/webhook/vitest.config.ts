import { signetTestConfig } from '../../vitest.shared.ts';

export default signetTestConfig({
  testTimeout: 30_000,
  coverage: { lines: 90, branches: 80, functions: 90, statements: 90 },
  coverageExclude: [
    // Covered against a real API server by the e2e suite (e2e/test/webhook-kube.test.ts), which
    // this package's tests cannot start.
    'src/kube/**',
    // Process entry points: started as real processes by test/admission/admission-service.test.ts.
    'src/bin/**',
    'src/commands/serve.ts',
    'src/index.ts',
  ],
});
