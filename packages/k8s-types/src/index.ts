/**
 * @signet/k8s-types: the data shapes every Signet package uses. Admission reviews, the workload
 * catalogue (where each kind keeps its pod spec, scale and owner), image fields, the
 * `policy.sigstore.dev` policy objects and Signet's namespaced `policy.signet.dev` ones, each with
 * a validating parser whose errors name the field.
 */
export * from './admission.js';
export * from './errors.js';
export { type Fail, isObject, type JsonObject } from './fields.js';
export * from './images.js';
export {
  type ClusterImagePolicyParseOptions,
  parseClusterImagePolicy,
} from './policy/cluster-image-policy.js';
export {
  type ImagePolicyParseOptions,
  type Loosening,
  looseningsOf,
  parseImagePolicy,
} from './policy/image-policy.js';
export {
  type ImagePolicyExceptionParseOptions,
  parseImagePolicyException,
} from './policy/image-policy-exception.js';
export type * from './policy/namespaced-types.js';
export {
  EXCEPTION_LIMITS,
  EXEMPTABLE_KINDS,
  SIGNET_POLICY_API_VERSION,
  SIGNET_POLICY_GROUP,
} from './policy/namespaced-types.js';
export { parsePolicyControllerConfig } from './policy/policy-controller-config.js';
export { parseTrustRoot } from './policy/trust-root.js';
export type * from './policy/types.js';
export {
  ALLOW_UNPINNED_TAGS_ANNOTATION,
  CLUSTER_IMAGE_POLICY_VERSIONS,
  INCLUDE_NAMESPACE_LABEL,
  POLICY_CONTROLLER_CONFIG_NAME,
  POLICY_GROUP,
  policyModeOf,
} from './policy/types.js';
export * from './registration.js';
export * from './workloads.js';
