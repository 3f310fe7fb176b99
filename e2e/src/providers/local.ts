// The default provider: the local control plane (host processes on loopback) and Signet as a host
// process registered through a URL.
import { startLocalCluster } from '../cluster/index.js';
import { createNamespace, installPolicyCrds } from '../scenarios/kube.js';
import { prepareTestImages } from '../scenarios/test-images.js';
import { SIGNET_NAMESPACE, type SignetWebhook, startSignet } from '../signet-webhook.js';
import type { ClusterProvider, DeploySignetOptions } from './provider.js';
import type { TestCluster } from './test-cluster.js';

/** Installs the CRDs, applies the policies and starts Signet as a host process (ready once it loaded them). */
export async function deployLocalSignet(
  cluster: TestCluster,
  options: DeploySignetOptions,
): Promise<SignetWebhook> {
  const report = options.onProgress ?? (() => {});
  const [crds] = await Promise.all([installPolicyCrds(cluster), createNamespace(cluster, SIGNET_NAMESPACE)]);
  report(`crds: ${crds.join(', ')} established`);
  if (options.policies.length > 0) await cluster.apply(options.policies);
  const started = Date.now();
  const signet = await startSignet({ cluster, insecureRegistries: options.insecureRegistries });
  try {
    await signet.waitForPolicies(options.policyNames);
  } catch (error) {
    await signet.stop();
    throw error;
  }
  report(
    `signet: ready in ${((Date.now() - started) / 1000).toFixed(1)}s at ${signet.url} (log ${signet.logFile})`,
  );
  return signet;
}

export const localProvider: ClusterProvider = {
  name: 'local',
  startCluster: (options = {}) =>
    startLocalCluster({ onProgress: (event) => options.onProgress?.(`cluster ${event.line}`) }),
  prepareTestImages: (cluster, onProgress) =>
    prepareTestImages({
      group: cluster.group,
      workDir: cluster.runDir,
      ...(onProgress ? { onProgress } : {}),
    }),
  deploySignet: deployLocalSignet,
};
