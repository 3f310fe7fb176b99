/**
 * @signet/k8s-types: the data shapes every Signet package uses. Admission reviews, the workload
 * catalogue (where each kind keeps its pod spec, scale and owner), image fields, and the
 * `policy.sigstore.dev` policy objects, each with a validating parser whose errors name the field.
 */
export * from './admission.js';
export * from './errors.js';
export { type Fail, isObject, type JsonObject } from './fields.js';
export * from './images.js';
export * from './policy.js';
export * from './policy-types.js';
export * from './registration.js';
export * from './workloads.js';
