#!/usr/bin/env node
// Builds (or finds cached) the pinned test tools, two at a time, printing one progress line at a time:
//   pnpm --filter @signet/testbed build-tools [names...]     (no names: every tool but the kind suite's)
//   pnpm --filter @signet/testbed build-tools --kind         (what the kind suite needs)
//   ... --serial                                              (one build at a time)
//   ... --paths                                               (then one `path <name> <file>` line each)
import { TestbedError } from '../errors.js';
import {
  DEFAULT_TOOL_NAMES,
  ensureTools,
  isToolName,
  KIND_TOOL_NAMES,
  TOOL_NAMES,
  type ToolName,
} from '../tools.js';
import { SOURCE_MODULES, type SourceModuleName, sourceModule } from '../upstream.js';

function parseArgs(argv: readonly string[]): {
  names: ToolName[];
  concurrency: 1 | 2;
  printPaths: boolean;
} {
  const names: ToolName[] = [];
  let concurrency: 1 | 2 = 2;
  let printPaths = false;
  for (const arg of argv) {
    if (arg === '--serial') concurrency = 1;
    else if (arg === '--parallel')
      concurrency = 2; // the default; kept for scripts that say it
    else if (arg === '--paths') printPaths = true;
    else if (arg === '--kind') names.push(...KIND_TOOL_NAMES);
    else if (isToolName(arg)) names.push(arg);
    else {
      throw new TestbedError('UNKNOWN_TOOL', `unknown tool "${arg}"; known tools: ${TOOL_NAMES.join(', ')}`);
    }
  }
  return {
    names: names.length > 0 ? [...new Set(names)] : [...DEFAULT_TOOL_NAMES],
    concurrency,
    printPaths,
  };
}

async function main(): Promise<void> {
  const { names, concurrency, printPaths } = parseArgs(process.argv.slice(2).filter((arg) => arg !== '--'));
  const started = Date.now();
  console.log(`build-tools: ${names.join(', ')}`);
  const paths = await ensureTools(names, {
    concurrency,
    onProgress: (event) => console.log(`build-tools: ${event.message}`),
  });
  // The compatibility, migration and chart tests read upstream files from the module cache.
  for (const name of Object.keys(SOURCE_MODULES) as SourceModuleName[]) {
    const upstream = `${SOURCE_MODULES[name].module}@${SOURCE_MODULES[name].version}`;
    console.log(`build-tools: ${upstream} (go mod download)`);
    console.log(`build-tools: ${upstream} at ${await sourceModule(name)}`);
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  console.log(`build-tools: ${Object.keys(paths).length} tools ready in ${seconds}s`);
  // `path <name> <file>` lines, for scripts (`.ci/run` finds the OCI runtime wrapper this way).
  if (printPaths) for (const [name, path] of Object.entries(paths)) console.log(`path ${name} ${path}`);
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`build-tools: FAILED: ${message}`);
  process.exitCode = 1;
});
