// Shared vitest settings. Every workspace has its own vitest.config.ts that calls this, so a
// per-package run never picks up another package's configuration.
import { defineConfig, type ViteUserConfig } from 'vitest/config';

export interface SignetTestOptions {
  /** Coverage thresholds (percent) enforced by `vitest run --coverage`. */
  readonly coverage?: { lines?: number; branches?: number; functions?: number; statements?: number };
  /** Files excluded from coverage in addition to tests and type-only modules. */
  readonly coverageExclude?: readonly string[];
  readonly testTimeout?: number;
  readonly hookTimeout?: number;
  readonly include?: readonly string[];
  /** Run test files one after another (e2e shares one cluster per file and heavy processes). */
  readonly serial?: boolean;
  /**
   * A vitest globalSetup file (relative to the package) that builds and installs what the tests
   * run before the first one starts (`prepareTestPrerequisites` of @signet/testbed).
   */
  readonly globalSetup?: string;
  /** Only for a workspace that has no tests yet; remove it with the first test. */
  readonly passWithNoTests?: boolean;
}

export function signetTestConfig(options: SignetTestOptions = {}): ViteUserConfig {
  return defineConfig({
    test: {
      include: [...(options.include ?? ['test/**/*.test.ts'])],
      testTimeout: options.testTimeout ?? 10_000,
      hookTimeout: options.hookTimeout ?? 30_000,
      // The machine-readable results feed the `N passed, N failed` line `pnpm test` ends with.
      reporters: ['default', 'json'],
      outputFile: { json: 'test-results.json' },
      ...(options.serial ? { fileParallelism: false } : {}),
      ...(options.passWithNoTests ? { passWithNoTests: true } : {}),
      ...(options.globalSetup ? { globalSetup: [options.globalSetup] } : {}),
      benchmark: { include: ['bench/**/*.bench.ts'] },
      coverage: {
        provider: 'v8',
        include: ['src/**/*.ts'],
        exclude: ['src/**/*.d.ts', ...(options.coverageExclude ?? [])],
        reporter: ['text-summary', 'json-summary'],
        ...(options.coverage ? { thresholds: { ...options.coverage } } : {}),
      },
    },
  });
}
