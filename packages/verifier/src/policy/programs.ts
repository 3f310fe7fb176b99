// The CEL programs of a policy (`attestations[].policy`, `spec.policy`): only `type: cel` is
// evaluated; CUE and Rego are refused when the policy is compiled, never silently skipped.
import type { Policy } from '@signet/k8s-types';
import { type CelProgram, compileCel } from './cel.js';
import { PolicyCompileError, type PolicySite } from './errors.js';

/** Reads a ConfigMap's `data`, or `undefined` when there is no such ConfigMap. */
export type ConfigMapLookup = (
  namespace: string,
  name: string,
) => Readonly<Record<string, string>> | undefined;

export interface ProgramContext {
  readonly lookupConfigMap: ConfigMapLookup | undefined;
  /** Namespace of a `configMapRef` without one. */
  readonly systemNamespace: string;
}

/** Compiles a policy of type `cel` from `data` or a ConfigMap. Throws {@link PolicyCompileError}. */
export function compilePolicyProgram(policy: Policy, site: PolicySite, context: ProgramContext): CelProgram {
  if (policy.type !== 'cel') {
    throw new PolicyCompileError(
      'UNSUPPORTED_POLICY_TYPE',
      site,
      `policy type ${JSON.stringify(policy.type)} is not supported; Signet evaluates policies of type "cel" (rewrite the ${policy.type} policy in CEL)`,
    );
  }
  const source = policySource(policy, site, context);
  try {
    return compileCel(source);
  } catch (error) {
    throw new PolicyCompileError('INVALID_CEL', site, `CEL does not parse: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

function policySource(policy: Policy, site: PolicySite, context: ProgramContext): string {
  if (policy.data !== undefined && policy.data !== '') return policy.data;
  if (policy.remote !== undefined) {
    throw new PolicyCompileError(
      'UNSUPPORTED_POLICY_SOURCE',
      site,
      'remote policies are not supported (Signet fetches nothing while compiling); inline the CEL in data',
    );
  }
  const ref = policy.configMapRef;
  if (ref?.name === undefined || ref.name === '') {
    throw new PolicyCompileError('UNSUPPORTED_POLICY_SOURCE', site, 'the policy has no data');
  }
  if (context.lookupConfigMap === undefined) {
    throw new PolicyCompileError(
      'UNSUPPORTED_POLICY_SOURCE',
      site,
      'configMapRef policies need a ConfigMap lookup',
    );
  }
  const namespace = ref.namespace || context.systemNamespace;
  const data = context.lookupConfigMap(namespace, ref.name);
  const value = data?.[ref.key ?? ''];
  if (value === undefined) {
    throw new PolicyCompileError(
      'UNSUPPORTED_POLICY_SOURCE',
      site,
      `ConfigMap ${namespace}/${ref.name} ${data === undefined ? 'not found' : `has no key ${JSON.stringify(ref.key ?? '')}`}`,
    );
  }
  return value;
}
