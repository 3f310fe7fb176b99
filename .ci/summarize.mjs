// Sums the vitest JSON reports (`test-results.json`, written by every workspace's vitest run)
// into the one closing line CI reads: `N passed, N failed`.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const roots = ['packages', 'apps', 'tools', '.'];
const reports = new Set();
for (const root of roots) {
  for (const dir of root === '.' ? ['e2e'] : safeList(root).map((d) => join(root, d))) {
    const file = join(dir, 'test-results.json');
    if (exists(file)) reports.add(file);
  }
}

let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of [...reports].sort()) {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  passed += report.numPassedTests ?? 0;
  // A file that fails to load fails its suite without failing a test: count it as one failure.
  const brokenSuites = (report.numFailedTests ?? 0) === 0 ? (report.numFailedTestSuites ?? 0) : 0;
  failed += (report.numFailedTests ?? 0) + brokenSuites;
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  console.log(`${file}: ${report.numPassedTests} passed, ${report.numFailedTests} failed`);
}
if (reports.size === 0) console.log('no vitest reports found');
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);

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
