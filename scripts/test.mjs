// `pnpm test`: lint, then every workspace's build, typecheck and tests (turbo, going on past a
// failure), then one closing line `N passed, N failed`, summed from every vitest run's report.
// Exits non-zero when anything failed. Arguments go to turbo (`pnpm test -- --filter=@signet/core`).
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeReports, summarize } from './test-summary.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const run = (command, args) => {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.error) throw result.error;
  return result.status ?? 1;
};

// A lint failure fails the run, but the tests still run: the closing line counts it as a failure.
const lint = run('pnpm', ['run', 'lint']);
if (lint !== 0) console.log('pnpm test: lint failed (see above); running the tests anyway');
removeReports(root);
const args = process.argv.slice(2);
if (args[0] === '--') args.shift();
const turbo = run('turbo', ['run', 'build', 'typecheck', 'test', '--continue', ...args]);
const summary = summarize(root, { otherFailure: turbo !== 0, lintFailed: lint !== 0 });
console.log(`\n${summary.lines.join('\n')}`);
process.exit(lint !== 0 || turbo !== 0 || summary.failed > 0 ? 1 : 0);
