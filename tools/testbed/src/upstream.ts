// Upstream projects' own material, read in place from the Go module cache (downloaded and checked
// against the pinned go.sum, nothing built): policy-controller's test data, examples and config/
// manifests, which the compatibility and migration tests use as they are, never copies; and the
// CRDs of cert-manager and prometheus-operator, which the chart's objects are checked against.
import { join } from 'node:path';
import { TestbedError } from './errors.js';
import { runCommand } from './exec.js';
import { GO_MODULES_DIR } from './tools.js';

export const POLICY_CONTROLLER_MODULE = 'github.com/sigstore/policy-controller';
export const POLICY_CONTROLLER_VERSION = 'v0.15.1';

/** A pinned module whose files (not binaries) the tests read. */
interface SourceModule {
  /** Directory under go/ whose go.mod and go.sum pin it. */
  readonly dir: string;
  readonly module: string;
  readonly version: string;
}

export const SOURCE_MODULES = {
  'policy-controller': {
    dir: 'policy-controller',
    module: POLICY_CONTROLLER_MODULE,
    version: POLICY_CONTROLLER_VERSION,
  },
  'cert-manager': { dir: 'cert-manager', module: 'github.com/cert-manager/cert-manager', version: 'v1.21.2' },
  'prometheus-operator': {
    dir: 'prometheus-operator',
    module: 'github.com/prometheus-operator/prometheus-operator',
    version: 'v0.85.0',
  },
} as const satisfies Record<string, SourceModule>;

export type SourceModuleName = keyof typeof SOURCE_MODULES;

const downloads = new Map<SourceModuleName, Promise<string>>();

/** The module's directory in the module cache, downloaded on first use. */
export function sourceModule(name: SourceModuleName, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  let download = downloads.get(name);
  if (download === undefined) {
    const spec: SourceModule = SOURCE_MODULES[name];
    download = (async () => {
      try {
        const { stdout } = await runCommand('go', ['mod', 'download', '-json', spec.module], {
          cwd: join(GO_MODULES_DIR, spec.dir),
          env,
          timeoutMs: 5 * 60_000,
        });
        const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
        if (!dir) throw new Error(`go mod download printed no directory: ${stdout.slice(0, 200)}`);
        return dir;
      } catch (error) {
        downloads.delete(name);
        throw new TestbedError(
          'BUILD_FAILED',
          `downloading ${spec.module}@${spec.version} (go mod download) failed: ${String(error)}`,
          { cause: error },
        );
      }
    })();
    downloads.set(name, download);
  }
  return download;
}

/**
 * The directory of `github.com/sigstore/policy-controller@v0.15.1` in the module cache,
 * downloaded (checked against the pinned go.sum) on first use.
 */
export function policyControllerModule(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return sourceModule('policy-controller', env);
}
