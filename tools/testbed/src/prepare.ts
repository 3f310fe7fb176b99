// What a package's tests run, made ready before the first test starts (a vitest globalSetup calls
// this), never inside a test's timeout: the Go tools (built two at a time, at most two builds per
// cache across every process turbo runs), the Python package sets (pip, first use only) and the
// upstream modules whose files the tests read (go mod download). Cached: a warm run only checks.
import type { ToolProgress } from './go-build.js';
import { ensurePythonPackage, type PythonPackageName } from './python.js';
import { ensureTools, type ToolName } from './tools.js';
import { type SourceModuleName, sourceModule } from './upstream.js';

export interface TestPrerequisites {
  readonly tools?: readonly ToolName[];
  readonly python?: readonly PythonPackageName[];
  readonly sourceModules?: readonly SourceModuleName[];
}

export interface PrepareOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Where progress lines go: one per build or install event (cached ones are counted, not listed). */
  readonly log?: (line: string) => void;
}

/**
 * Makes every prerequisite ready, in parallel, with progress lines `<label>: ...`; throws a
 * `TestbedError` naming what could not be made (the tests would only fail later without it).
 */
export async function prepareTestPrerequisites(
  label: string,
  needs: TestPrerequisites,
  options: PrepareOptions = {},
): Promise<void> {
  const log = options.log ?? ((line: string) => console.log(line));
  const env = options.env ?? process.env;
  const started = Date.now();
  const tools = needs.tools ?? [];
  const python = needs.python ?? [];
  const modules = needs.sourceModules ?? [];
  let made = 0;
  const onTool = (event: ToolProgress) => {
    if (event.kind === 'cached') return;
    if (event.kind === 'built') made += 1;
    log(`${label}: ${event.message}`);
  };
  const onPython = (line: string) => {
    if (/: installed in /.test(line)) made += 1;
    log(`${label}: ${line}`);
  };
  await Promise.all([
    tools.length > 0 ? ensureTools(tools, { env, onProgress: onTool }) : undefined,
    ...python.map((name) => ensurePythonPackage(name, { env, onProgress: onPython })),
    ...modules.map((name) => sourceModule(name, env)),
  ]);
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const parts = [
    count(tools.length, 'tool', 'tools'),
    ...(python.length > 0 ? [count(python.length, 'Python package set', 'Python package sets')] : []),
    ...(modules.length > 0 ? [count(modules.length, 'upstream module', 'upstream modules')] : []),
  ];
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const how = made > 0 ? `${made} built or installed, the rest cached` : 'cached';
  log(`${label}: ${parts.join(', ')} ready in ${seconds}s (${how})`);
}
