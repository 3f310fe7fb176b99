// @signet/webhook: the Signet admission server. The `signet` CLI is the entry point for users;
// these exports serve the e2e suite and embedding.
export {
  createCertificateAuthority,
  type IssuedCertificate,
  issueServingCertificate,
  renewalTime,
} from './certificates.js';
export {
  type AdmissionAppOptions,
  createAdmissionApp,
  type Endpoint,
  type ReviewContext,
  type ReviewHandler,
  type ReviewOutcome,
} from './http/admission-app.js';
export { createOpsApp, type Readiness } from './http/ops-app.js';
export { createLogger, type Logger } from './logger.js';
export { SignetMetrics } from './metrics.js';
export { type RunningServers, startServers } from './server.js';
export { type CertificatePair, CertificateWatcher, readCertificatePair } from './tls.js';
export {
  excludedNamespaces,
  type WebhookConfigurationOptions,
  type WebhookEndpoint,
  webhookConfigurations,
} from './webhook-configurations.js';
