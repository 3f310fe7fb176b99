// @signet/webhook: the Signet admission server. The `signet` CLI is the entry point for users;
// these exports serve the e2e suite and embedding.

export { AdmissionService, type AdmissionServiceOptions } from './admission/admission-service.js';
export { type Admission, assembleAdmission } from './admission/assemble-admission.js';
export type { PullSecretLookup } from './admission/pull-secret-keychain.js';
export {
  createCertificateAuthority,
  type IssuedCertificate,
  issueClientCertificate,
  issueServingCertificate,
  renewalTime,
} from './certificates.js';
export { main } from './cli/main.js';
export type { ServeConfig } from './config.js';
export {
  type AdmissionApp,
  type AdmissionAppOptions,
  createAdmissionApp,
  DEFAULT_BODY_LIMIT,
  type Endpoint,
  type ReviewContext,
  type ReviewHandler,
  type ReviewOutcome,
} from './http/admission-app.js';
export { createOpsApp, type Readiness } from './http/ops-app.js';
export { ClusterPolicySource, type ClusterPolicySourceOptions } from './kube/cluster-source.js';
export { type InvolvedObject, PolicyEventRecorder } from './kube/events.js';
export { KubeApi, openKubeApi } from './kube/kube-api.js';
export { type KubeAccessOptions, loadKubeConfig } from './kube/kube-config.js';
export { KubeApiError, kubeApiError, statusOf } from './kube/kube-errors.js';
export { KubePullSecretLookup } from './kube/pull-secret-lookup.js';
export { SelfManagedTls, type SelfManagedTlsOptions } from './kube/self-managed-tls.js';
export { createLogger, type Logger } from './logger.js';
export { SignetMetrics } from './metrics.js';
export { policyApplier } from './policy/policy-applier.js';
export { loadPolicyFile, parsePolicyYaml } from './policy/policy-file.js';
export {
  collectPolicyObjects,
  type PolicyObjects,
  type PolicyProblem,
  type SecretData,
} from './policy/policy-objects.js';
export {
  type CompileResult,
  compileSnapshot,
  type PolicySnapshot,
  PolicyStore,
  type SnapshotPolicy,
} from './policy/policy-store.js';
export { RecordCollector, type RecordCollectorOptions } from './records/record-collector.js';
export {
  RECORD_API_VERSION,
  RECORD_GROUP,
  RECORD_KIND,
  RECORD_PLURAL,
  RECORD_VERSION,
  type RecordFields,
  type RecordSigner,
  readRecord,
  recordName,
  signedRecord,
} from './records/record-format.js';
export { keyId, RecordKey } from './records/record-key.js';
export { RecordMetrics } from './records/record-metrics.js';
export { RecordStore, type StoredRecord } from './records/record-store.js';
export { RecordWriter } from './records/record-writer.js';
export { VerificationRecords, type VerificationRecordsOptions } from './records/verification-records.js';
export { type ClientAuth, type RunningServers, startServers } from './server.js';
export { type RunningSignet, startSignet } from './signet.js';
export { type CertificatePair, CertificateWatcher, readCertificatePair } from './tls.js';
export {
  excludedNamespaces,
  type WebhookConfigurationOptions,
  type WebhookEndpoint,
  webhookConfigurations,
} from './webhook-configurations.js';
