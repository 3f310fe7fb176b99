// E2E_PROVIDER=kind: a kind cluster, with Signet built into its container image and installed
// with its Helm chart, as users run it. UNTESTED IN CI: the machines that run the suite have no
// Docker engine. See e2e/README.md for what it covers and what it does not.
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRunDir, ensureTools, ProcessGroup, runCommand } from '@signet/testbed';
import { Kubectl } from '../cluster/kubectl.js';
import { signetChartDir } from '../scenarios/kube.js';
import { lastLoadedPolicies, SIGNET_NAMESPACE } from '../signet-webhook.js';
import { parseAdmissionLog } from '../webhooks/admission-log.js';
import type { ClusterProvider, DeployedSignet } from './provider.js';
import type { TestCluster } from './test-cluster.js';

export interface KindCluster extends TestCluster {
  readonly name: string;
}

const IMAGE = 'signet:e2e';
const RELEASE = 'signet';
const env = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `kind <args>` (kind and docker come from PATH: they are the user's, not pinned tools). */
const kind = (args: readonly string[], timeoutMs = 300_000) =>
  runCommand('kind', args, { env: env(), timeoutMs });

export const kindProvider: ClusterProvider = {
  name: 'kind',
  startCluster: async (options = {}) => {
    const report = options.onProgress ?? (() => {});
    const runDir = await createRunDir('signet-e2e-kind-');
    const name = `signet-e2e-${randomBytes(3).toString('hex')}`;
    const kubeconfig = join(runDir, 'kind.kubeconfig');
    const { kubectl: binary } = await ensureTools(['kubectl']);
    report(`kind: creating cluster ${name} (docker must be running)`);
    await kind(['create', 'cluster', '--name', name, '--kubeconfig', kubeconfig, '--wait', '180s']);
    const kubectl = new Kubectl({ binary, kubeconfig, home: runDir });
    const group = new ProcessGroup({ runDir });
    let stopping: Promise<void> | undefined;
    return {
      name,
      runDir,
      kubeconfig,
      group,
      kubectl: (args, o) => kubectl.run(args, o),
      apply: (manifests) => kubectl.apply(manifests),
      getJson: (args) => kubectl.getJson(args),
      logTails: async () => (await kubectl.run(['get', 'events', '-A', '--sort-by=.lastTimestamp'])).stdout,
      stop: () => {
        stopping ??= (async () => {
          await group.stopAll();
          await kind(['delete', 'cluster', '--name', name]).catch(() => undefined);
        })();
        return stopping;
      },
    };
  },
  deploySignet: async (testCluster, options) => {
    if (!('name' in testCluster) || typeof testCluster.name !== 'string')
      throw new Error('the kind provider deploys Signet only into a cluster it started');
    const cluster = testCluster as KindCluster;
    const report = options.onProgress ?? (() => {});
    const repoRoot = join(signetChartDir(), '..', '..', '..');
    report(`kind: docker build -t ${IMAGE} -f apps/webhook/Dockerfile .`);
    await runCommand(
      'docker',
      ['build', '-t', IMAGE, '-f', join(repoRoot, 'apps/webhook/Dockerfile'), repoRoot],
      {
        env: env(),
        timeoutMs: 1_800_000,
      },
    );
    await kind(['load', 'docker-image', IMAGE, '--name', cluster.name]);
    const { helm } = await ensureTools(['helm']);
    const [repository, tag] = IMAGE.split(':') as [string, string];
    const registries = options.insecureRegistries.map(
      (host, i) => `--set=verification.insecureRegistries[${i}]=${host}`,
    );
    report('kind: helm install signet apps/webhook/chart');
    await runCommand(
      helm,
      [
        'install',
        RELEASE,
        signetChartDir(),
        '--kubeconfig',
        cluster.kubeconfig,
        '--namespace',
        SIGNET_NAMESPACE,
        '--create-namespace',
        `--set=image.repository=${repository}`,
        `--set=image.tag=${tag}`,
        '--set=image.pullPolicy=Never',
        '--set=replicaCount=1',
        ...registries,
        '--wait',
        '--timeout=5m',
      ],
      { env: { ...env(), HOME: cluster.runDir }, timeoutMs: 360_000 },
    );
    if (options.policies.length > 0) await cluster.apply(options.policies);
    const logFile = join(cluster.runDir, 'signet.log');
    const readLog = async () => {
      const logs = await cluster.kubectl([
        'logs',
        '--namespace',
        SIGNET_NAMESPACE,
        '-l',
        'app.kubernetes.io/name=signet',
        '--tail=-1',
        '--max-log-requests=10',
      ]);
      await writeFile(logFile, logs.stdout);
      return logs.stdout;
    };
    for (let deadline = Date.now() + 60_000; ; await sleep(1_000)) {
      const loaded = lastLoadedPolicies(await readLog());
      if (options.policyNames.every((n) => loaded?.includes(n))) break;
      if (Date.now() > deadline)
        throw new Error(`Signet in kind did not load [${options.policyNames.join(', ')}]`);
    }
    // The chart registered Signet (the caBundle is Signet's own); applying the live objects again is a no-op.
    const live = await Promise.all(
      ['validatingwebhookconfiguration', 'mutatingwebhookconfiguration'].map((kind) =>
        cluster.getJson<{ metadata: Record<string, unknown> }>([kind, 'signet']),
      ),
    );
    const configurations = live.map(({ metadata, ...rest }) => ({
      ...rest,
      metadata: { name: metadata.name, labels: metadata.labels },
    }));
    const signet: DeployedSignet = {
      name: 'signet (in kind, from the chart)',
      logFile,
      configurations: () => configurations,
      admissions: async () => parseAdmissionLog(await readLog()),
      stop: async () => {
        await runCommand(
          helm,
          ['uninstall', RELEASE, '--kubeconfig', cluster.kubeconfig, '-n', SIGNET_NAMESPACE],
          {
            env: { ...env(), HOME: cluster.runDir },
            timeoutMs: 120_000,
          },
        ).catch(() => undefined);
      },
    };
    return signet;
  },
};
