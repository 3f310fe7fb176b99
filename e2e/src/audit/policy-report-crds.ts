// The PolicyReport CRDs the chart installs (`chart/files/policy-reports/`), applied to a test
// cluster so Signet's background audit has somewhere to publish.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestCluster } from '../providers/test-cluster.js';
import { must, signetChartDir } from '../scenarios/kube.js';

export async function installPolicyReportCrds(cluster: TestCluster): Promise<void> {
  const dir = join(signetChartDir(), 'files', 'policy-reports');
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  must(await cluster.kubectl(['apply', ...files.flatMap((f) => ['-f', join(dir, f)])]));
  must(
    await cluster.kubectl(
      [
        'wait',
        '--for=condition=Established',
        '--timeout=60s',
        'crd/policyreports.wgpolicyk8s.io',
        'crd/clusterpolicyreports.wgpolicyk8s.io',
      ],
      { timeoutMs: 70_000 },
    ),
  );
}
