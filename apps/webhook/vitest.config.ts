import { signetTestConfig } from '../../vitest.shared.ts';

export default signetTestConfig({
  testTimeout: 30_000,
  // helm, promtool, the registry and cosign are built before the first test, never inside one.
  globalSetup: 'test/global-setup.ts',
  coverage: { lines: 90, branches: 80, functions: 90, statements: 90 },
  coverageExclude: [
    // Covered against a real API server by the e2e suite (e2e/test/webhook-kube.test.ts), which
    // this package's tests cannot start.
    'src/kube/**',
    // The same for the audit's cluster side (listing, reports, Lease, Events, the scan loop and
    // `signet audit --kubeconfig`): e2e/test/signet-audit.test.ts runs it on a real control plane.
    'src/audit/cluster-inventory.ts',
    'src/audit/report-publisher.ts',
    'src/audit/noncompliance-events.ts',
    'src/audit/background-scanner.ts',
    'src/audit/start-scanner.ts',
    // Verification records on the cluster (the key Secret, the informer, the writer, the collector,
    // Events): e2e/test/verification-records.test.ts runs them against a real API server with two
    // Signet processes, and the kind suite's drain. Their format and flags are covered here.
    'src/records/grace-events.ts',
    'src/records/listed-records.ts',
    'src/records/record-collector.ts',
    'src/records/record-key.ts',
    'src/records/record-store.ts',
    'src/records/record-writer.ts',
    'src/records/verification-records.ts',
    // Reads a live cluster: covered by e2e/test/migration.test.ts.
    'src/migrate/cluster-state.ts',
    // Runs in a worker thread, which the test process's V8 coverage does not see; its verdicts are
    // asserted by test/http/body-check.test.ts and test/attack/heavy-bodies.test.ts.
    'src/http/body-check-worker.ts',
    // Process entry points: started as real processes by test/admission/admission-service.test.ts.
    'src/bin/**',
    'src/commands/serve.ts',
    'src/index.ts',
  ],
});
