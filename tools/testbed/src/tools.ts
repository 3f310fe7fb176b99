import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TestbedError } from './errors.js';
import { type BuildOptions, binaryPath, installGoBinaries, type ToolSpec } from './go-build.js';

const KUBERNETES_VERSION = 'v1.36.3';
const KIND_VERSION = 'v0.33.0';
const CONTAINERD_VERSION = 'v2.3.4';

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

function containerdTool<const N extends string>(name: N) {
  return {
    name,
    moduleDir: 'containerd',
    module: 'github.com/containerd/containerd/v2',
    version: CONTAINERD_VERSION,
    packagePath: `github.com/containerd/containerd/v2/cmd/${name}`,
    ldflags: [
      `-X github.com/containerd/containerd/v2/version.Version=${CONTAINERD_VERSION}`,
      '-X github.com/containerd/containerd/v2/version.Package=github.com/containerd/containerd/v2',
    ],
    // Snapshotters the kind node never selects; the rest builds without cgo.
    tags: ['no_btrfs', 'no_devmapper', 'no_zfs', 'no_aufs'],
  } as const;
}

/** Tools only the kind suite uses. */
const KIND_ONLY: ReadonlySet<string> = new Set([
  'kind',
  'kubelet',
  'kubeadm',
  'kube-proxy',
  'containerd',
  'containerd-shim-runc-v2',
  'ctr',
  'coredns',
  'pause',
  'kindnetd',
  'kube-router',
  'oci-runtime-wrapper',
]);

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
    // Helm 4, for the chart checks: every chart option renders and lints under both majors. Its
    // default `.Capabilities.KubeVersion` comes from the client-go in its build info, unstamped.
    name: 'helm4',
    moduleDir: 'helm4',
    module: 'helm.sh/helm/v4',
    version: 'v4.3.2',
    packagePath: 'helm.sh/helm/v4/cmd/helm',
    ldflags: [
      '-X helm.sh/helm/v4/internal/version.version=v4.3.2',
      '-X helm.sh/helm/v4/internal/version.gitTreeState=clean',
    ],
  },
  {
    // Prometheus' own rule checker and unit tester, for the chart's PrometheusRule alerts and the
    // dashboard's queries (`promtool check rules`, `promtool test rules`). `remove_all_sd` leaves
    // out the cloud service-discovery plugins, which promtool's rule commands never use.
    name: 'promtool',
    moduleDir: 'promtool',
    module: 'github.com/prometheus/prometheus',
    version: 'v0.316.0',
    packagePath: 'github.com/prometheus/prometheus/cmd/promtool',
    ldflags: [
      '-X github.com/prometheus/common/version.Version=3.16.0',
      '-X github.com/prometheus/common/version.Revision=v0.316.0',
    ],
    tags: ['remove_all_sd'],
  },
  {
    // sigstore policy-controller's webhook: the baseline of the side-by-side benchmark
    // (e2e/bench/side-by-side.ts), built only when that runs. Its go.mod replaces two modules
    // v0.15.1 pins but the proxy does not serve, so its cache path carries the go.mod's digest.
    name: 'policy-controller',
    moduleDir: 'policy-controller-webhook',
    module: 'github.com/sigstore/policy-controller',
    version: 'v0.15.1',
    packagePath: 'github.com/sigstore/policy-controller/cmd/webhook',
    ldflags: [],
    patched: true,
  },
  {
    // A private Sigstore for keyless signing with the real cosign (src/sigstore/): Fulcio with an
    // ephemeral CA, trusting the OIDC issuer a test serves on loopback.
    name: 'fulcio',
    moduleDir: 'fulcio',
    module: 'github.com/sigstore/fulcio',
    version: 'v1.8.8',
    packagePath: 'github.com/sigstore/fulcio',
    ldflags: ['-X sigs.k8s.io/release-utils/version.gitVersion=v1.8.8'],
  },
  {
    // The RFC 3161 timestamp authority's API, through our own small main: upstream's `serve`
    // always binds a metrics listener to the fixed :2112 and exits when it is taken.
    name: 'timestamp-authority',
    moduleDir: 'timestamp-authority',
    module: 'github.com/sigstore/timestamp-authority/v2',
    version: 'v2.1.3',
    packagePath: '.',
    ldflags: ['-X sigs.k8s.io/release-utils/version.gitVersion=v2.1.3'],
  },
  {
    // Rekor v2 (rekor-tiles) with its POSIX (local directory) Tessera backend: no database.
    name: 'rekor-server',
    moduleDir: 'rekor-tiles',
    module: 'github.com/sigstore/rekor-tiles/v2',
    version: 'v2.3.0',
    packagePath: 'github.com/sigstore/rekor-tiles/v2/cmd/rekor-server/posix',
    ldflags: ['-X sigs.k8s.io/release-utils/version.gitVersion=v2.3.0'],
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
  {
    // An HTTP(S) forward proxy that prints every target it connects to: our own small main over
    // github.com/elazarl/goproxy (plain HTTP forwarding and CONNECT tunnels).
    name: 'forward-proxy',
    moduleDir: 'forward-proxy',
    module: 'github.com/elazarl/goproxy',
    version: 'v1.9.4',
    packagePath: '.',
    ldflags: [],
  },
  // --- for the kind suite (`KIND_TOOL_NAMES`): kind itself and what its node image is made of ---
  {
    name: 'kind',
    moduleDir: 'kind',
    module: 'sigs.k8s.io/kind',
    version: KIND_VERSION,
    packagePath: 'sigs.k8s.io/kind',
    ldflags: [],
  },
  kubernetesTool('kubelet'),
  kubernetesTool('kubeadm'),
  kubernetesTool('kube-proxy'),
  containerdTool('containerd'),
  containerdTool('containerd-shim-runc-v2'),
  containerdTool('ctr'),
  {
    // CoreDNS with the plugins kubeadm's Corefile uses, registered by our own small main.
    name: 'coredns',
    moduleDir: 'coredns',
    module: 'github.com/coredns/coredns',
    version: 'v1.14.2',
    packagePath: '.',
    ldflags: [],
  },
  {
    // The Pod sandbox's process: our own Go program (the upstream pause is C, not a Go module).
    name: 'pause',
    moduleDir: 'pause',
    module: 'golang.org/x/sys',
    version: 'v0.38.0',
    packagePath: '.',
    ldflags: [],
  },
  {
    // The OCI runtime dockerd runs containers with on machines whose bounding set lacks a
    // capability Docker grants privileged containers (see docs in src/docker-engine.ts).
    name: 'oci-runtime-wrapper',
    moduleDir: 'oci-runtime-wrapper',
    module: 'golang.org/x/sys',
    version: 'v0.38.0',
    packagePath: '.',
    ldflags: [],
  },
  {
    // The node network agent of the kind node image (kind's kindnetd is not on the module proxy):
    // our own program over client-go: routes to the other nodes' Pod CIDRs and the CNI config.
    name: 'kindnetd',
    moduleDir: 'kindnetd',
    module: 'k8s.io/client-go',
    version: 'v0.36.3',
    packagePath: '.',
    ldflags: [],
  },
  {
    // The kind node's NetworkPolicy enforcement: kube-router's firewall alone (iptables and ipset;
    // no routing, no service proxy). kind's own kindnet embeds kube-network-policies, which queues
    // packets with nftables' `queue` statement; these machines' kernels lack nft_queue.
    name: 'kube-router',
    moduleDir: 'kube-router',
    module: 'github.com/cloudnativelabs/kube-router/v2',
    version: 'v2.1.0',
    packagePath: 'github.com/cloudnativelabs/kube-router/v2/cmd/kube-router',
    ldflags: ['-X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=v2.1.0'],
  },
] as const satisfies readonly ToolSpec[];

export type ToolName = (typeof TOOL_TABLE)[number]['name'];

export const TOOL_NAMES: readonly ToolName[] = TOOL_TABLE.map((tool) => tool.name);

/**
 * What the kind suite (and `pnpm demo --kind`) runs: kind, its node image's programs, the Docker
 * runtime wrapper, the registry container's registry, helm, cosign and crane (`build-tools --kind`).
 */
export const KIND_TOOL_NAMES = [
  'kind',
  'kubelet',
  'kubeadm',
  'kube-proxy',
  'containerd',
  'containerd-shim-runc-v2',
  'ctr',
  'coredns',
  'pause',
  'kindnetd',
  'kube-router',
  'oci-runtime-wrapper',
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubectl',
  'helm',
  'cosign',
  'crane',
  'registry',
] as const satisfies readonly ToolName[];

/** Tools only a benchmark uses, built when it runs. */
const BENCH_ONLY: ReadonlySet<string> = new Set(['policy-controller']);

/** The tools every machine builds (`build-tools` without names): the kind-only and bench-only ones are left out. */
export const DEFAULT_TOOL_NAMES: readonly ToolName[] = TOOL_NAMES.filter(
  (name) => !KIND_ONLY.has(name) && !BENCH_ONLY.has(name),
);

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
  // Our own programs (a main package in the module dir) and patched builds change without a version
  // bump: the cache path carries a digest of their source (and go.mod), so an edit is rebuilt
  // instead of reusing a stale binary.
  const own = spec.packagePath === '.' || ('patched' in spec && spec.patched);
  return own ? { ...spec, sourceDigest: sourceDigest(spec.moduleDir) } : spec;
}

const digests = new Map<string, string>();

function sourceDigest(moduleDir: string): string {
  let digest = digests.get(moduleDir);
  if (digest === undefined) {
    const directory = join(GO_MODULES_DIR, moduleDir);
    const hash = createHash('sha256');
    for (const file of readdirSync(directory).sort()) {
      if (!/\.go$|^go\.(mod|sum)$/.test(file)) continue;
      hash
        .update(`${file}\0`)
        .update(readFileSync(join(directory, file)))
        .update('\0');
    }
    digest = hash.digest('hex').slice(0, 12);
    digests.set(moduleDir, digest);
  }
  return digest;
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
