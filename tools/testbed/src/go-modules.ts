// Source trees of Go modules the tests read data from (policy-controller's own policies), from
// the module cache: `go mod download` fetches a pinned version once through the module proxy.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestbedError } from './errors.js';
import { runCommand } from './exec.js';

export const POLICY_CONTROLLER_MODULE = 'github.com/sigstore/policy-controller';
export const POLICY_CONTROLLER_VERSION = 'v0.15.1';

/** The directory of `module@version` in the Go module cache, downloading it if needed. */
export async function goModuleDir(
  module: string,
  version: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  // Outside any module, so no go.mod of the caller is read or changed.
  const cwd = await mkdtemp(join(tmpdir(), 'signet-gomod-'));
  try {
    await writeFile(join(cwd, 'go.mod'), 'module signet.local/download\n\ngo 1.26.0\n');
    const { stdout } = await runCommand('go', ['mod', 'download', '-json', `${module}@${version}`], {
      cwd,
      env: { ...env, GOFLAGS: '-mod=mod' },
      timeoutMs: 10 * 60_000,
    });
    const dir = (JSON.parse(stdout) as { Dir?: string; Error?: string }).Dir;
    if (!dir)
      throw new TestbedError(
        'COMMAND_FAILED',
        `go mod download ${module}@${version} gave no directory: ${stdout}`,
      );
    return dir;
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

/** policy-controller v0.15.1's source, for its test data and examples. */
export function policyControllerDir(env?: NodeJS.ProcessEnv): Promise<string> {
  return goModuleDir(POLICY_CONTROLLER_MODULE, POLICY_CONTROLLER_VERSION, env);
}
