// Shared set-up of the KMS tests: a real registry, images pushed by crane, the real cosign, and
// Signet's verifier configured as the webhook configures it.
import { rm } from 'node:fs/promises';
import { parseReference } from '@signet/core';
import { type ClusterImagePolicy, parseClusterImagePolicy } from '@signet/k8s-types';
import { RegistryClient } from '@signet/registry';
import * as testbed from '@signet/testbed';
import { compileAuthorities, ImageVerifier, type KmsKeySource, type PolicyCheck } from '@signet/verifier';

export const SETUP_TIMEOUT = 30 * 60_000;

export const progress = (line: string) => console.log(`testbed: ${line}`);

export interface Bench {
  readonly group: testbed.ProcessGroup;
  readonly runDir: string;
  readonly registry: testbed.Registry;
  readonly cosign: testbed.Cosign;
  push(repository: string): Promise<string>;
  verify(cip: ClusterImagePolicy, image: string, kmsKeys: KmsKeySource): Promise<PolicyCheck>;
  stop(): Promise<void>;
}

export async function startBench(prefix: string): Promise<Bench> {
  const { crane } = await testbed.ensureTools(['crane', 'cosign', 'registry'], {
    onProgress: (event) => progress(event.message),
  });
  const runDir = await testbed.createRunDir(prefix);
  const group = new testbed.ProcessGroup({ runDir, graceMs: 2_000 });
  const registry = await testbed.startRegistry({ referrers: false, group });
  const cosign = await testbed.createCosign({ workDir: runDir });
  const client = new RegistryClient({ insecureHosts: [registry.host] });
  const verifier = new ImageVerifier({ registry: client });
  let revision = 0;
  return {
    group,
    runDir,
    registry,
    cosign,
    async push(repository) {
      const digest = await testbed.pushRandomImage(registry, repository, 'v1', { crane, workDir: runDir });
      return `${registry.host}/${repository}@${digest}`;
    },
    async verify(cip, image, kmsKeys) {
      const current = `r${++revision}`;
      const policy = await compileAuthorities(cip, { kmsKeys, revision: () => current });
      const result = await verifier.verifyImage(
        { reference: parseReference(image), policies: [policy] },
        { signal: AbortSignal.timeout(20_000), deadline: Date.now() + 20_000 },
      );
      const [check] = result.checks;
      if (check === undefined) throw new Error('no policy check');
      return check;
    },
    async stop() {
      await group.stopAll();
      if (!process.env.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
    },
  };
}

export function kmsPolicy(uri: string, name = 'kms'): ClusterImagePolicy {
  return parseClusterImagePolicy({
    apiVersion: 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata: { name },
    spec: { images: [{ glob: '**' }], authorities: [{ name: 'kms-key', key: { kms: uri } }] },
  });
}

export function failure(check: PolicyCheck): string {
  return check.passed ? 'passed' : check.failure.reason;
}
