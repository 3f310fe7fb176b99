// A kind cluster on the Docker engine at DOCKER_HOST, from the offline node image: one
// control-plane node (schedulable) and one worker, so Pods really run, move and drain; a registry
// container on the cluster's network that the nodes pull from over plain HTTP.
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createRunDir,
  Docker,
  ensureKindNodeImage,
  ensureTools,
  type KindNodeImage,
  ProcessGroup,
  type RegistryContainer,
  runCommand,
  startRegistryContainer,
} from '@signet/testbed';
import { stringify } from 'yaml';
import { Kubectl } from '../cluster/kubectl.js';
import type { TestCluster } from '../providers/test-cluster.js';
import { poll } from '../scenarios/kube.js';
import { createKindNetwork, type KindNetwork, removeKindNetwork } from './docker-network.js';
import { freePortInRange } from './ports.js';

export interface KindCluster extends TestCluster {
  readonly name: string;
  readonly docker: Docker;
  readonly network: KindNetwork;
  readonly registry: RegistryContainer;
  readonly nodeImage: KindNodeImage;
  /** `kind <args>` for this cluster's engine and network. */
  kind(args: readonly string[], timeoutMs?: number): Promise<{ stdout: string; stderr: string }>;
  /** Names of the node containers (= the Kubernetes node names). */
  nodeNames(): Promise<string[]>;
}

/**
 * A client certificate the API server presents when it calls the webhook at `address`: the
 * Service's `<service>.<namespace>.svc` (port 443), or `host:port` for a webhook registered by URL.
 */
export interface WebhookClientCertificate {
  readonly address: string;
  /** PEM. */
  readonly cert: string;
  /** PEM, unencrypted. */
  readonly key: string;
}

export interface StartKindOptions {
  readonly onProgress?: (line: string) => void;
  /** Keep the run directory after `stop()` (logs, kubeconfig); default `SIGNET_E2E_KEEP=1`. */
  readonly keepRunDir?: boolean;
  /**
   * Given to kube-apiserver through an AdmissionConfiguration (docs/operations.md, "Mutual TLS
   * with the API server"): it presents each when a webhook at that address asks for one.
   */
  readonly webhookClientCertificates?: readonly WebhookClientCertificate[];
}

/** Where the control-plane node has the API server's admission files (read-only). */
const ADMISSION_DIR = '/etc/kubernetes/signet';

/**
 * The API server's AdmissionConfiguration for both webhook plugins and the kubeconfig it names
 * (a user per webhook address), written to `dir` on the host, which the control-plane node mounts
 * at ADMISSION_DIR.
 */
async function writeAdmissionFiles(dir: string, clients: readonly WebhookClientCertificate[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    users: clients.map((client) => ({
      name: client.address,
      user: {
        'client-certificate-data': Buffer.from(client.cert).toString('base64'),
        'client-key-data': Buffer.from(client.key).toString('base64'),
      },
    })),
  };
  const plugin = (name: string) => ({
    name,
    configuration: {
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'WebhookAdmissionConfiguration',
      kubeConfigFile: `${ADMISSION_DIR}/webhook-kubeconfig.yaml`,
    },
  });
  await writeFile(join(dir, 'webhook-kubeconfig.yaml'), stringify(kubeconfig), { mode: 0o600 });
  await writeFile(
    join(dir, 'admission-configuration.yaml'),
    stringify({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AdmissionConfiguration',
      plugins: [plugin('ValidatingAdmissionWebhook'), plugin('MutatingAdmissionWebhook')],
    }),
  );
}

/**
 * The kind configuration: what differs from kind's defaults, and why. With `admissionDir`, the
 * control-plane node mounts it and kubeadm starts kube-apiserver with its AdmissionConfiguration
 * (kind merges `extraArgs` into its own list).
 */
function kindConfig(apiServerPort: number, etcdImageTag: string, admissionDir?: string): string {
  const apiServer = admissionDir
    ? {
        apiServer: {
          extraArgs: [
            { name: 'admission-control-config-file', value: `${ADMISSION_DIR}/admission-configuration.yaml` },
          ],
          extraVolumes: [
            {
              name: 'signet-admission',
              hostPath: ADMISSION_DIR,
              mountPath: ADMISSION_DIR,
              readOnly: true,
              pathType: 'Directory',
            },
          ],
        },
      }
    : {};
  const config = {
    kind: 'Cluster',
    apiVersion: 'kind.x-k8s.io/v1alpha4',
    networking: {
      apiServerAddress: '127.0.0.1',
      apiServerPort,
      // The kube-proxy image carries nft (see the testbed's component images), not iptables.
      kubeProxyMode: 'nftables',
    },
    nodes: [
      {
        role: 'control-plane',
        // Schedulable: with the worker, two nodes for Signet's two replicas and for a drain.
        kubeadmConfigPatches: [stringify({ kind: 'InitConfiguration', nodeRegistration: { taints: [] } })],
        ...(admissionDir
          ? { extraMounts: [{ hostPath: admissionDir, containerPath: ADMISSION_DIR, readOnly: true }] }
          : {}),
      },
      { role: 'worker' },
    ],
    kubeadmConfigPatches: [
      // kubeadm 1.36 defaults to an older etcd than the testbed's pin.
      stringify({ kind: 'ClusterConfiguration', etcd: { local: { imageTag: etcdImageTag } }, ...apiServer }),
      // These machines run cgroup v1, which kubelet 1.35+ refuses unless told otherwise.
      stringify({ kind: 'KubeletConfiguration', failCgroupV1: false }),
    ],
    // Registry hosts (the test registry) are configured per host in /etc/containerd/certs.d.
    containerdConfigPatches: [
      '[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "/etc/containerd/certs.d"\n',
    ],
  };
  return stringify(config);
}

/** Tells every node's containerd to pull from `host` over plain HTTP. */
async function trustRegistry(docker: Docker, nodes: readonly string[], host: string): Promise<void> {
  const hostsToml = `server = "http://${host}"\n\n[host."http://${host}"]\n  capabilities = ["pull", "resolve"]\n`;
  await Promise.all(
    nodes.map((node) =>
      docker.run(
        [
          'exec',
          '-i',
          node,
          'sh',
          '-c',
          `mkdir -p /etc/containerd/certs.d/${host} && cat > /etc/containerd/certs.d/${host}/hosts.toml`,
        ],
        { input: hostsToml },
      ),
    ),
  );
}

/**
 * Creates the cluster (node image from the cache or built, about 30 s for two nodes when cached),
 * starts the registry container, and waits until every node is Ready. On failure everything
 * started is removed again and the run directory kept.
 */
export async function startKindCluster(options: StartKindOptions = {}): Promise<KindCluster> {
  const report = options.onProgress ?? (() => {});
  const docker = new Docker(process.env.DOCKER_HOST);
  const runDir = await createRunDir('signet-e2e-kind-');
  const id = randomBytes(3).toString('hex');
  const name = `signet-${id}`;
  const kubeconfig = join(runDir, 'kubeconfig');
  const { kind: kindBinary, kubectl: kubectlBinary } = await ensureTools(['kind', 'kubectl'], {
    onProgress: (event) => report(`kind: ${event.message}`),
  });
  const nodeImage = await ensureKindNodeImage({ docker, onProgress: report });
  const network = await createKindNetwork(docker, name);
  report(`kind: network ${network.name} ${network.subnet} (host ${network.gateway})`);
  const kind = (args: readonly string[], timeoutMs = 300_000) =>
    runCommand(kindBinary, args, {
      env: { ...docker.env, KIND_EXPERIMENTAL_DOCKER_NETWORK: network.name },
      timeoutMs,
    });
  const group = new ProcessGroup({ runDir });
  let registry: RegistryContainer | undefined;
  const teardown = async () => {
    await group.stopAll();
    await kind(['delete', 'cluster', '--name', name], 120_000).catch(() => undefined);
    await registry?.remove();
    await removeKindNetwork(docker, network);
  };
  try {
    const configFile = join(runDir, 'kind.yaml');
    const clients = options.webhookClientCertificates ?? [];
    const admissionDir = clients.length > 0 ? join(runDir, 'apiserver-admission') : undefined;
    if (admissionDir) await writeAdmissionFiles(admissionDir, clients);
    await writeFile(
      configFile,
      kindConfig(await freePortInRange('127.0.0.1'), nodeImage.etcdImageTag, admissionDir),
    );
    const started = Date.now();
    report(`kind: creating cluster ${name} (2 nodes, ${nodeImage.reference})`);
    const heartbeat = setInterval(
      () => report(`kind: still creating ${name} (${Math.round((Date.now() - started) / 1000)}s)`),
      15_000,
    );
    try {
      await kind([
        'create',
        'cluster',
        '--name',
        name,
        '--image',
        nodeImage.reference,
        '--config',
        configFile,
        '--kubeconfig',
        kubeconfig,
        '--wait',
        '180s',
      ]);
    } finally {
      clearInterval(heartbeat);
    }
    report(`kind: cluster ${name} created in ${Math.round((Date.now() - started) / 1000)}s`);
    registry = await startRegistryContainer({
      docker,
      network: network.name,
      ip: network.registryIp,
      name: `${name}-registry`,
      workDir: runDir,
    });
    const nodeNames = async () =>
      (await kind(['get', 'nodes', '--name', name], 30_000)).stdout.split('\n').filter(Boolean).sort();
    await trustRegistry(docker, await nodeNames(), registry.host);
    report(`kind: registry ${registry.url} (container ${registry.container}), trusted by every node`);
    const kubectl = new Kubectl({ binary: kubectlBinary, kubeconfig, home: runDir });
    await poll('every node Ready', 180_000, async () => {
      const result = await kubectl.run([
        'get',
        'nodes',
        '-o',
        'jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}',
      ]);
      const states = result.stdout.trim().split(/\s+/).filter(Boolean);
      return states.length >= 2 && states.every((s) => s.endsWith('=True'))
        ? true
        : result.stdout || result.stderr;
    });
    report('kind: every node Ready');
    const registryContainer = registry;
    let stopping: Promise<void> | undefined;
    return {
      name,
      runDir,
      kubeconfig,
      group,
      docker,
      network,
      registry: registryContainer,
      nodeImage,
      kind,
      nodeNames,
      kubectl: (args, o) => kubectl.run(args, o),
      apply: (manifests) => kubectl.apply(manifests),
      getJson: (args) => kubectl.getJson(args),
      logTails: async () => {
        const events = await kubectl.run(['get', 'events', '-A', '--sort-by=.lastTimestamp']);
        return events.stdout.split('\n').slice(-30).join('\n');
      },
      stop: (stopOptions = {}) => {
        stopping ??= (async () => {
          const keep = stopOptions.keepRunDir ?? options.keepRunDir ?? process.env.SIGNET_E2E_KEEP === '1';
          if (keep) {
            await kind(['export', 'logs', join(runDir, 'kind-logs'), '--name', name], 120_000).catch(
              () => undefined,
            );
          }
          await teardown();
          if (!keep) await rm(runDir, { recursive: true, force: true });
        })();
        return stopping;
      },
    };
  } catch (error) {
    await kind(['export', 'logs', join(runDir, 'kind-logs'), '--name', name], 120_000).catch(() => undefined);
    await teardown();
    throw new Error(`kind cluster ${name} did not start (logs in ${runDir}): ${(error as Error).message}`, {
      cause: error,
    });
  }
}
