// Sums the vitest JSON reports (`test-results.json`, written by every workspace's vitest run) into
// the one closing line `pnpm test` ends with and CI reads: `N passed, N failed`.
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Where the workspaces' reports are: `<workspace>/test-results.json`. */
export function reportFiles(root) {
  const files = [];
  for (const parent of ['packages', 'apps', 'tools']) {
    for (const dir of safeList(join(root, parent))) files.push(join(parent, dir, 'test-results.json'));
  }
  files.push(join('e2e', 'test-results.json'));
  return files.filter((file) => exists(join(root, file))).sort();
}

/** Removes the reports of an earlier run, so that a workspace whose tests did not run is not counted. */
export function removeReports(root) {
  for (const file of reportFiles(root)) rmSync(join(root, file), { force: true });
}

/**
 * One line per report and the closing line. `otherFailure`: something failed that no report
 * counts (a build, a typecheck, a test run that died before writing its report): one failure.
 */
export function summarize(root, { otherFailure = false, lintFailed = false } = {}) {
  const lines = [];
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const files = reportFiles(root);
  for (const file of files) {
    const report = JSON.parse(readFileSync(join(root, file), 'utf8'));
    passed += report.numPassedTests ?? 0;
    // A file that fails to load fails its suite without failing a test: count it as one failure.
    const brokenSuites = (report.numFailedTests ?? 0) === 0 ? (report.numFailedTestSuites ?? 0) : 0;
    failed += (report.numFailedTests ?? 0) + brokenSuites;
    skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
    lines.push(`${file}: ${report.numPassedTests} passed, ${report.numFailedTests} failed`);
  }
  if (files.length === 0) lines.push('no vitest reports found');
  if (otherFailure && failed === 0) {
    lines.push(
      'a build, typecheck or test run failed without a failing test (see above): counted as 1 failure',
    );
    failed = 1;
  }
  if (lintFailed) {
    lines.push('pnpm lint failed (see above): counted as 1 failure');
    failed += 1;
  }
  lines.push(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
  return { lines, passed, failed, skipped };
}

function safeList(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function exists(file) {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
