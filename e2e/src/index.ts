// @signet/e2e: Signet's end-to-end scenarios on a real Kubernetes control plane.
export * from './cluster/index.js';
export { signKeylessLegacy, simpleSigningPayload } from './keyless/legacy-signature.js';
export { createTestSigstore, type KeylessIdentity, type TestSigstore } from './keyless/test-sigstore.js';
export { type NaiveWebhook, type NaiveWebhookOptions, startNaiveWebhook } from './naive-webhook.js';
export {
  type ClusterProvider,
  type DeployedSignet,
  type DeploySignetOptions,
  deployLocalSignet,
  type KindCluster,
  kindProvider,
  localProvider,
  providerFromEnv,
  type TestCluster,
} from './providers/index.js';
export {
  createNamespace,
  deniedByWebhook,
  installPolicyCrds,
  must,
  poll,
  signetChartDir,
} from './scenarios/kube.js';
export {
  type KeylessPolicyOptions,
  type KeyPolicyOptions,
  keylessPolicy,
  keyPolicy,
} from './scenarios/policies.js';
export {
  DEPLOYMENT_CONTROLLER_USER,
  INCLUDE_LABEL,
  type RolloutObservation,
  type RolloutScenarioOptions,
  runRolloutScenario,
} from './scenarios/rollout.js';
export type { DeploymentState, ReplicaSetState, RolloutState } from './scenarios/rollout-state.js';
export {
  KEY_POLICY,
  type Preparation,
  type SignetEnvironment,
  type SignetEnvironmentOptions,
  startProviderEnvironment,
  startSignetEnvironment,
} from './scenarios/signet-environment.js';
export { prepareTestImages, type TestImages, type TestImagesOptions } from './scenarios/test-images.js';
export {
  imageFieldPath,
  type WorkloadKind,
  type WorkloadOptions,
  workloadManifest,
} from './scenarios/workloads.js';
export {
  lastLoadedPolicies,
  SIGNET_NAMESPACE,
  type SignetWebhook,
  type SignetWebhookOptions,
  signetCliPath,
  startSignet,
  startSignetProcess,
} from './signet-webhook.js';
export { podCreateReview, type ReviewAnswer, sendReview } from './webhooks/admission-client.js';
export {
  type AdmissionRecord,
  parseAdmissionLog,
  readAdmissionLog,
  waitForAdmission,
} from './webhooks/admission-log.js';
export type { WebhookUnderTest } from './webhooks/webhook-under-test.js';
