// @signet/e2e: Signet's end-to-end scenarios on a real Kubernetes control plane.
export * from './cluster/index.js';
export { type NaiveWebhook, type NaiveWebhookOptions, startNaiveWebhook } from './naive-webhook.js';
export {
  DEPLOYMENT_CONTROLLER_USER,
  INCLUDE_LABEL,
  type RolloutObservation,
  type RolloutScenarioOptions,
  runRolloutScenario,
} from './scenarios/rollout.js';
export type { DeploymentState, ReplicaSetState, RolloutState } from './scenarios/rollout-state.js';
export { prepareTestImages, type TestImages, type TestImagesOptions } from './scenarios/test-images.js';
export { type AdmissionRecord, parseAdmissionLog, readAdmissionLog } from './webhooks/admission-log.js';
export type { WebhookUnderTest } from './webhooks/webhook-under-test.js';
