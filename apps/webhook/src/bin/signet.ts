#!/usr/bin/env node
// The `signet` executable. It is written so that any Node since 12 parses it (no static import,
// no top-level await, no `?.` or `??`): an older Node then says which Node Signet needs, instead
// of failing on the syntax or the Node APIs of the modules loaded after the check.

const SUPPORTED_MAJOR = 26;

const major = Number(process.versions.node.split('.')[0]);
if (!(major >= SUPPORTED_MAJOR)) {
  process.stderr.write(
    `signet: Signet needs Node ${SUPPORTED_MAJOR} or later; this is Node ${process.versions.node} (${process.execPath})\n`,
  );
  // 3, "could not be checked": a CI gate must not read it as a denial (1) or as bad input (2).
  process.exitCode = 3;
} else {
  import('./run-cli.js').then(
    (cli) => cli.runCli(process.argv.slice(2)),
    (error) => {
      process.stderr.write(`signet: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
