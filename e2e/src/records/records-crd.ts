// The VerificationRecord CRD the chart installs (`chart/files/verification-records/`), applied to a
// test cluster so Signet can keep its records there.
import { join } from 'node:path';
import type { TestCluster } from '../providers/test-cluster.js';
import { must, signetChartDir } from '../scenarios/kube.js';

export async function installVerificationRecordsCrd(cluster: TestCluster): Promise<void> {
  const file = join(signetChartDir(), 'files', 'verification-records', 'signet.dev_verificationrecords.yaml');
  must(await cluster.kubectl(['apply', '-f', file]));
  must(
    await cluster.kubectl(
      ['wait', '--for=condition=Established', '--timeout=60s', 'crd/verificationrecords.signet.dev'],
      { timeoutMs: 70_000 },
    ),
  );
}
