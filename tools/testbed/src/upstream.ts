// policy-controller's own test material (test/testdata, examples), read in place from the Go
// module cache: the compatibility tests run upstream's policies as they are, never copies.
import { join } from 'node:path';
import { TestbedError } from './errors.js';
import { runCommand } from './exec.js';
import { GO_MODULES_DIR } from './tools.js';

export const POLICY_CONTROLLER_MODULE = 'github.com/sigstore/policy-controller';
export const POLICY_CONTROLLER_VERSION = 'v0.15.1';

let downloaded: Promise<string> | undefined;

/**
 * The directory of `github.com/sigstore/policy-controller@v0.15.1` in the module cache,
 * downloaded (checked against the pinned go.sum) on first use.
 */
export function policyControllerModule(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  downloaded ??= (async () => {
    try {
      const { stdout } = await runCommand('go', ['mod', 'download', '-json', POLICY_CONTROLLER_MODULE], {
        cwd: join(GO_MODULES_DIR, 'policy-controller'),
        env,
        timeoutMs: 5 * 60_000,
      });
      const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
      if (!dir) throw new Error(`go mod download printed no directory: ${stdout.slice(0, 200)}`);
      return dir;
    } catch (error) {
      downloaded = undefined;
      throw new TestbedError(
        'BUILD_FAILED',
        `downloading ${POLICY_CONTROLLER_MODULE}@${POLICY_CONTROLLER_VERSION} (go mod download) failed: ${String(error)}`,
        { cause: error },
      );
    }
  })();
  return downloaded;
}
