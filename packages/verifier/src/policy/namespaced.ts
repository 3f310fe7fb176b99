// An ImagePolicy's authorities, compiled as a ClusterImagePolicy's are, inside its namespace: its
// Secrets and ConfigMaps are looked up there and nowhere else, and it gets none of Signet's own
// reach (KMS keys read with Signet's cloud identity, remote policies fetched from any URL). Its
// parser already refuses those (`@signet/k8s-types`); this holds whatever object comes in.
import type { ClusterImagePolicy, ImagePolicy } from '@signet/k8s-types';
import { type CompileContext, type CompiledAuthorities, compileAuthorities } from './compile.js';

/**
 * Compiles `policy`'s authorities and spec-level policy. Its name in results and messages is
 * `namespace/name`, as core names it. Throws `PolicyCompileError` as {@link compileAuthorities}.
 */
export function compileImagePolicyAuthorities(
  policy: ImagePolicy,
  context: CompileContext = {},
): Promise<CompiledAuthorities> {
  const { namespace } = policy.metadata;
  const confined =
    <T>(lookup: ((ns: string, name: string) => T | undefined) | undefined) =>
    (ns: string, name: string): T | undefined =>
      ns === namespace ? lookup?.(ns, name) : undefined;
  const inNamespace: CompileContext = {
    ...(context.trustRoots ? { trustRoots: context.trustRoots } : {}),
    ...(context.engines ? { engines: context.engines } : {}),
    ...(context.formats ? { formats: context.formats } : {}),
    ...(context.revision ? { revision: context.revision } : {}),
    systemNamespace: namespace,
    lookupSecret: confined(context.lookupSecret),
    lookupConfigMap: confined(context.lookupConfigMap),
  };
  const asCluster: ClusterImagePolicy = {
    apiVersion: 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata: { ...policy.metadata, name: `${namespace}/${policy.metadata.name}` },
    spec: policy.spec,
  };
  return compileAuthorities(asCluster, inNamespace);
}
