// ClusterImagePolicies for tests, parsed by @signet/k8s-types exactly as the webhook parses them.
import { type ClusterImagePolicy, parseClusterImagePolicy } from '@signet/k8s-types';

export function clusterImagePolicy(
  authorities: readonly unknown[],
  spec: Record<string, unknown> = {},
  name = 'release',
): ClusterImagePolicy {
  return parseClusterImagePolicy(
    {
      apiVersion: 'policy.sigstore.dev/v1beta1',
      kind: 'ClusterImagePolicy',
      metadata: { name },
      spec: { images: [{ glob: 'registry.example/**' }], authorities, ...spec },
    },
    { failOnEmptyAuthorities: false },
  );
}
