// What each review leaves behind: the `observe` middleware starts its duration and in-flight
// count, and `logOutcome` writes its `admission` line and counts its decision. Labels and logged
// fields come from bounded sets or are clipped: a client's text never makes them unbounded.
import { type AdmissionRequest, POLICY_GROUP, workloadForResource } from '@signet/k8s-types';
import { type AppSettings, attachExchange, Exchange, type Middleware } from './exchange.js';
import type { Endpoint, ReviewOutcome } from './review.js';

const MAX_LOGGED_FIELD = 256;

/** The first middleware of an endpoint: the review's timer, gauge and exchange. */
export function observe(endpoint: Endpoint, settings: AppSettings): Middleware {
  const { metrics } = settings;
  return (_req, res, next) => {
    const stopTimer = metrics.admissionDuration.startTimer({ endpoint });
    metrics.inFlight.inc();
    attachExchange(res, new Exchange(endpoint, settings.now(), settings, stopTimer));
    next();
  };
}

/**
 * The `kind` metrics label: a kind of the workload catalogue (by the resource the request was
 * routed to), else `other`. Never the request's own text, which any client can make unbounded.
 */
export function kindLabel(request: AdmissionRequest): string {
  const { group, resource } = request.resource;
  if (group === POLICY_GROUP) return POLICY_KINDS.get(resource) ?? 'other';
  return workloadForResource(group, resource)?.kind ?? 'other';
}

const POLICY_KINDS: ReadonlyMap<string, string> = new Map([
  ['clusterimagepolicies', 'ClusterImagePolicy'],
  ['trustroots', 'TrustRoot'],
]);

/** Request fields are the client's: logged, but never at unbounded length. */
function clip(value: string | undefined): string | undefined {
  if (value === undefined || value.length <= MAX_LOGGED_FIELD) return value;
  return `${value.slice(0, MAX_LOGGED_FIELD)}…(${value.length} characters)`;
}

/** The decision's `admission` line and counters. */
export function logOutcome(exchange: Exchange, request: AdmissionRequest, outcome: ReviewOutcome): void {
  const { settings, endpoint } = exchange;
  const { metrics } = settings;
  metrics.admissions.inc({
    endpoint,
    decision: outcome.decision,
    rule: outcome.rule,
    kind: kindLabel(request),
  });
  if (endpoint === 'validate') {
    metrics.namespaceAdmissions.inc({
      namespace: metrics.namespaceLabel.value(request.namespace),
      decision: outcome.decision,
    });
  }
  const name = request.name ?? request.object?.metadata?.name ?? request.object?.metadata?.generateName;
  const line = {
    endpoint,
    uid: clip(request.uid),
    kind: clip(request.kind.kind),
    subResource: clip(request.subResource),
    namespace: clip(request.namespace),
    name: clip(typeof name === 'string' ? name : undefined),
    operation: request.operation,
    user: clip(request.userInfo.username),
    dryRun: request.dryRun,
    decision: outcome.decision,
    rule: outcome.rule,
    reason: outcome.reason,
    ...(outcome.warnings && outcome.warnings.length > 0 ? { warnings: outcome.warnings.map(clip) } : {}),
    durationMs: Math.round((settings.now() - exchange.started) * 1000) / 1000,
  };
  // The per-review line skips redaction (its fields carry no secret, see createLoggers).
  if (outcome.decision === 'denied') settings.admissionLog.warn(line, 'admission');
  else settings.admissionLog.info(line, 'admission');
}
