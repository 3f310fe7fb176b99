import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TestbedError } from './errors.js';
import { type BuildOptions, binaryPath, installGoBinaries, type ToolSpec } from './go-build.js';

const KUBERNETES_VERSION = 'v1.36.3';

/** How Kubernetes' own build stamps a release, so `--version`, skew checks and compatibility versions are right. */
function kubernetesLdflags(version: string): string[] {
  const [major = '', minor = ''] = version.replace(/^v/, '').split('.');
  return ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) => [
    `-X ${pkg}.gitVersion=${version}`,
    `-X ${pkg}.gitMajor=${major}`,
    `-X ${pkg}.gitMinor=${minor}`,
    `-X ${pkg}.gitTreeState=clean`,
  ]);
}

function kubernetesTool<const N extends string>(name: N) {
  return {
    name,
    moduleDir: 'kubernetes',
    module: 'k8s.io/kubernetes',
    version: KUBERNETES_VERSION,
    packagePath: `k8s.io/kubernetes/cmd/${name}`,
    ldflags: kubernetesLdflags(KUBERNETES_VERSION),
  } as const;
}

/** The one table that drives builds, cache paths and the go.mod consistency test. */
export const TOOL_TABLE = [
  {
    name: 'etcd',
    moduleDir: 'etcd',
    module: 'go.etcd.io/etcd/server/v3',
    version: 'v3.6.16',
    packagePath: 'go.etcd.io/etcd/server/v3',
    ldflags: [],
  },
  kubernetesTool('kube-apiserver'),
  kubernetesTool('kube-controller-manager'),
  kubernetesTool('kube-scheduler'),
  kubernetesTool('kubectl'),
  {
    name: 'kwok',
    moduleDir: 'kwok',
    module: 'sigs.k8s.io/kwok',
    version: 'v0.8.0',
    packagePath: 'sigs.k8s.io/kwok/cmd/kwok',
    ldflags: [],
  },
  {
    name: 'cosign',
    moduleDir: 'cosign',
    module: 'github.com/sigstore/cosign/v3',
    version: 'v3.1.3',
    packagePath: 'github.com/sigstore/cosign/v3/cmd/cosign',
    ldflags: ['-X sigs.k8s.io/release-utils/version.gitVersion=v3.1.3'],
  },
  {
    name: 'crane',
    moduleDir: 'crane',
    module: 'github.com/google/go-containerregistry',
    version: 'v0.22.1',
    packagePath: 'github.com/google/go-containerregistry/cmd/crane',
    ldflags: ['-X github.com/google/go-containerregistry/cmd/crane/cmd.Version=v0.22.1'],
  },
  {
    // `helm template` of the chart in the e2e chart check. Stamped as helm's Makefile does: its
    // version, and the Kubernetes version `.Capabilities.KubeVersion` defaults to (from the client-go
    // it is built with, v0.37 -> 1.37), else the chart's `kubeVersion: >=1.30` fails against 1.20.
    name: 'helm',
    moduleDir: 'helm',
    module: 'helm.sh/helm/v3',
    version: 'v3.22.0',
    packagePath: 'helm.sh/helm/v3/cmd/helm',
    ldflags: [
      '-X helm.sh/helm/v3/internal/version.version=v3.22.0',
      '-X helm.sh/helm/v3/internal/version.gitTreeState=clean',
      '-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1',
      '-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=37',
      '-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1',
      '-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=37',
    ],
  },
  {
    // CNCF distribution: a real registry WITHOUT the referrers API (cosign falls back to tags).
    name: 'registry',
    moduleDir: 'distribution',
    module: 'github.com/distribution/distribution/v3',
    version: 'v3.1.2',
    packagePath: 'github.com/distribution/distribution/v3/cmd/registry',
    ldflags: ['-X github.com/distribution/distribution/v3/version.version=v3.1.2'],
  },
  {
    // A registry WITH the referrers API: our own small main over cuelabs.dev/go/oci/ociregistry.
    name: 'oci-registry',
    moduleDir: 'ociregistry',
    module: 'cuelabs.dev/go/oci/ociregistry',
    version: 'v0.0.0-20251212221603-3adeb8663819',
    packagePath: '.',
    ldflags: [],
  },
] as const satisfies readonly ToolSpec[];

export type ToolName = (typeof TOOL_TABLE)[number]['name'];

export const TOOL_NAMES: readonly ToolName[] = TOOL_TABLE.map((tool) => tool.name);

/** Where the Go module directories live (`tools/testbed/go/`, from both `src/` and `dist/`). */
export const GO_MODULES_DIR = fileURLToPath(new URL('../go/', import.meta.url));

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

export function toolSpec(name: string): ToolSpec {
  const spec = TOOL_TABLE.find((tool) => tool.name === name);
  if (!spec) {
    throw new TestbedError('UNKNOWN_TOOL', `unknown tool "${name}"; known tools: ${TOOL_NAMES.join(', ')}`);
  }
  return spec;
}

/** `$SIGNET_CACHE_DIR`, else `~/.cache/signet`: outside the repository, shared by every checkout. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.SIGNET_CACHE_DIR;
  return configured && configured.length > 0 ? configured : join(homedir(), '.cache', 'signet');
}

/** `<cache>/bin/<tool>-<version>/<tool>`, where `ensureTools` puts the tool. */
export function toolPath(name: ToolName, env: NodeJS.ProcessEnv = process.env): string {
  return binaryPath(cacheRoot(env), toolSpec(name));
}

export type EnsureToolsOptions = BuildOptions;

/**
 * Makes sure every named tool is in the cache (`$SIGNET_CACHE_DIR` or `~/.cache/signet`), building
 * the missing ones from their pinned module directories, and returns each binary's absolute path.
 */
export async function ensureTools<const N extends ToolName>(
  names: readonly N[],
  options: EnsureToolsOptions = {},
): Promise<Record<N, string>> {
  const specs = names.map((name) => toolSpec(name));
  const location = { modulesDir: GO_MODULES_DIR, cacheDir: cacheRoot(options.env ?? process.env) };
  const paths = await installGoBinaries(specs, location, options);
  return Object.fromEntries(names.map((name) => [name, paths.get(name)])) as Record<N, string>;
}
