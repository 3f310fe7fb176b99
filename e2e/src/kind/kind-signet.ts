// Signet in a kind cluster as users run it: its image built offline (apps/webhook/image) with its
// SBOM and provenance, pushed to the cluster's registry, signed and attested with cosign
// (signet-release-image.ts), installed with its Helm chart by digest (two replicas, self-managed
// TLS, the webhooks reached through the Service), its admissions read from its Pods' logs.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureTools, runCommand } from '@signet/testbed';
import type { DeployedSignet, DeploySignetOptions } from '../providers/provider.js';
import { poll, signetChartDir } from '../scenarios/kube.js';
import { lastLoadedPolicies, SIGNET_NAMESPACE } from '../signet-webhook.js';
import { type AdmissionRecord, parseAdmissionLog } from '../webhooks/admission-log.js';
import type { KindCluster } from './kind-cluster.js';
import { publishSignetImage, type SignetReleaseImage } from './signet-release-image.js';

export const SIGNET_RELEASE = 'signet';
export const SIGNET_SELECTOR = 'app.kubernetes.io/name=signet';
/** The chart's Deployment, Service and PodDisruptionBudget are named `<release>-webhook`. */
export const SIGNET_DEPLOYMENT = `${SIGNET_RELEASE}-webhook`;

export interface KindSignet extends DeployedSignet {
  /** The image reference the chart was installed with: `<registry>/signet@sha256:...`. */
  readonly image: string;
  /** The signed image, its key, SBOM and provenance. */
  readonly release: SignetReleaseImage;
  /** Seconds spent building the image, loading it into the nodes, and installing the chart. */
  readonly timings: Readonly<Record<string, number>>;
  /** Names of Signet's Pods now (Running or not). */
  pods(): Promise<string[]>;
  /** `helm <args>` against the cluster. */
  helm(args: readonly string[], timeoutMs?: number): Promise<string>;
  /**
   * `helm upgrade` of Signet's release with `values` over the ones it has (`--reuse-values`), as an
   * operator changes one setting; waits until the Deployment is rolled out.
   */
  upgrade(values: Record<string, unknown>): Promise<void>;
}

/**
 * Builds, signs and pushes Signet's image (signet-release-image.ts), installs the chart with it by
 * digest, applies the policies and waits until every Signet Pod has loaded them.
 */
export async function deployKindSignet(
  cluster: KindCluster,
  options: DeploySignetOptions,
): Promise<KindSignet> {
  const report = options.onProgress ?? (() => {});
  const timings: Record<string, number> = {};
  const timed = async <T>(step: string, work: () => Promise<T>): Promise<T> => {
    const started = Date.now();
    const result = await work();
    timings[step] = Math.round((Date.now() - started) / 100) / 10;
    report(`signet: ${step} in ${timings[step]}s`);
    return result;
  };
  const release = await publishSignetImage(cluster, { timed });
  const image = release.reference;
  const { helm: helmBinary } = await ensureTools(['helm']);
  const helm = async (args: readonly string[], timeoutMs = 300_000) =>
    (
      await runCommand(helmBinary, [...args, '--kubeconfig', cluster.kubeconfig], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cluster.runDir },
        timeoutMs,
      })
    ).stdout;
  await timed('chart installed (helm install --wait)', () =>
    helm([
      'install',
      SIGNET_RELEASE,
      signetChartDir(),
      '--namespace',
      SIGNET_NAMESPACE,
      '--create-namespace',
      // By digest, from the registry the nodes pull from: what was signed is what runs.
      `--set=image.registry=${cluster.registry.host}`,
      '--set=image.repository=signet',
      `--set=image.digest=${release.digest}`,
      ...options.insecureRegistries.map((host, i) => `--set=verification.insecureRegistries[${i}]=${host}`),
      '--wait',
      '--timeout=5m',
    ]),
  );
  const logs = new Map<string, string>();
  const pods = async () =>
    (
      await cluster.kubectl([
        'get',
        'pods',
        '--namespace',
        SIGNET_NAMESPACE,
        '-l',
        SIGNET_SELECTOR,
        '-o',
        'jsonpath={.items[*].metadata.name}',
      ])
    ).stdout
      .split(/\s+/)
      .filter(Boolean);
  // Logs of Pods that are gone (a rolling restart, a drain) are kept from the last read.
  const readLogs = async () => {
    for (const pod of await pods()) {
      const result = await cluster.kubectl(['logs', '--namespace', SIGNET_NAMESPACE, pod, '--tail=-1']);
      if (result.exitCode === 0) logs.set(pod, result.stdout);
    }
    return logs;
  };
  if (options.policies.length > 0) await cluster.apply(options.policies);
  await timed('policies loaded by every replica', () =>
    poll(`Signet's Pods to load [${options.policyNames.join(', ')}]`, 90_000, async () => {
      const current = await pods();
      await readLogs();
      const missing = current.filter((pod) => {
        const loaded = lastLoadedPolicies(logs.get(pod) ?? '');
        return !options.policyNames.every((name) => loaded?.includes(name));
      });
      return missing.length === 0 && current.length > 0 ? true : `not yet loaded by ${missing.join(', ')}`;
    }),
  );
  const logFile = join(cluster.runDir, 'signet.log');
  const admissions = async (): Promise<AdmissionRecord[]> => {
    const all = [...(await readLogs()).values()].join('\n');
    await writeFile(logFile, all);
    return parseAdmissionLog(all).sort((a, b) => a.time.localeCompare(b.time));
  };
  // The chart registered Signet (caBundle patched by Signet itself); scenarios apply these again.
  const live = await Promise.all(
    ['validatingwebhookconfiguration', 'mutatingwebhookconfiguration'].map((kind) =>
      cluster.getJson<{ metadata: Record<string, unknown> }>([kind, 'signet']),
    ),
  );
  const configurations = live.map(({ metadata, ...rest }) => ({
    ...rest,
    metadata: { name: metadata.name, labels: metadata.labels },
  }));
  return {
    name: 'signet (in kind, from its image and chart)',
    image,
    release,
    timings,
    logFile,
    configurations: () => configurations,
    admissions,
    pods,
    helm,
    upgrade: async (values) => {
      const file = join(cluster.runDir, `values-${Date.now()}.json`);
      await writeFile(file, JSON.stringify(values));
      await helm(
        [
          'upgrade',
          SIGNET_RELEASE,
          signetChartDir(),
          '--namespace',
          SIGNET_NAMESPACE,
          '--reuse-values',
          '-f',
          file,
          '--wait',
          '--timeout=4m',
        ],
        300_000,
      );
    },
    stop: async () => {
      await admissions().catch(() => undefined);
      await helm(['uninstall', SIGNET_RELEASE, '--namespace', SIGNET_NAMESPACE, '--wait'], 120_000).catch(
        () => undefined,
      );
    },
  };
}
