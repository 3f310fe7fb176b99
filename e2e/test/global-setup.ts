// Builds what the scenarios run before the first test starts, not inside a hook's timeout: the
// control plane, registries, crane, cosign, helm 3 and 4, the upstream CRDs and policies the chart
// and migration tests read, and, when a Docker engine that can run kind answers, the kind suite's
// tools (its node image is built by the suite itself, or beforehand by .ci/run).
import {
  KIND_TOOL_NAMES,
  PRIVATE_SIGSTORE_TOOLS,
  prepareTestPrerequisites,
  type ToolName,
} from '@signet/testbed';
import { LOCAL_CLUSTER_TOOLS } from '../src/cluster/local-cluster.ts';
import { kindUnavailableReason } from '../src/kind/preflight.ts';

export default async () => {
  const kind = (await kindUnavailableReason()) === undefined;
  const tools: ToolName[] = [
    ...LOCAL_CLUSTER_TOOLS,
    'crane',
    'cosign',
    'registry',
    'oci-registry',
    'helm',
    'helm4',
    // the cosign 3 and GitHub-style trust scenarios, kind's two teams
    ...PRIVATE_SIGSTORE_TOOLS,
    ...(kind ? KIND_TOOL_NAMES : []),
  ];
  await prepareTestPrerequisites('prepare', {
    tools: [...new Set(tools)],
    sourceModules: ['policy-controller', 'cert-manager', 'prometheus-operator'],
  });
};
