#!/usr/bin/env node
// Builds (or finds cached) the pinned test tools, printing one progress line at a time:
//   pnpm --filter @signet/testbed build-tools [names...]     (no names: every tool)
import { TestbedError } from '../errors.js';
import { ensureTools, isToolName, TOOL_NAMES, type ToolName } from '../tools.js';
import { POLICY_CONTROLLER_MODULE, POLICY_CONTROLLER_VERSION, policyControllerModule } from '../upstream.js';

function parseArgs(argv: readonly string[]): { names: ToolName[]; concurrency: 1 | 2 } {
  const names: ToolName[] = [];
  let concurrency: 1 | 2 = 1;
  for (const arg of argv) {
    if (arg === '--parallel') concurrency = 2;
    else if (isToolName(arg)) names.push(arg);
    else {
      throw new TestbedError('UNKNOWN_TOOL', `unknown tool "${arg}"; known tools: ${TOOL_NAMES.join(', ')}`);
    }
  }
  return { names: names.length > 0 ? names : [...TOOL_NAMES], concurrency };
}

async function main(): Promise<void> {
  const { names, concurrency } = parseArgs(process.argv.slice(2).filter((arg) => arg !== '--'));
  const started = Date.now();
  console.log(`build-tools: ${names.join(', ')}`);
  const paths = await ensureTools(names, {
    concurrency,
    onProgress: (event) => console.log(`build-tools: ${event.message}`),
  });
  // The compatibility tests read policy-controller's policies from the module cache.
  const upstream = `${POLICY_CONTROLLER_MODULE}@${POLICY_CONTROLLER_VERSION}`;
  console.log(`build-tools: ${upstream} (go mod download)`);
  console.log(`build-tools: ${upstream} at ${await policyControllerModule()}`);
  const seconds = Math.round((Date.now() - started) / 1000);
  console.log(`build-tools: ${Object.keys(paths).length} tools ready in ${seconds}s`);
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`build-tools: FAILED: ${message}`);
  process.exitCode = 1;
});
