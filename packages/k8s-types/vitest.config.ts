import { signetTestConfig } from '../../vitest.shared.ts';

export default signetTestConfig({
  coverage: { lines: 100, functions: 100, statements: 99, branches: 95 },
  coverageExclude: ['src/index.ts'],
});
