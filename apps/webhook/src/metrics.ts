import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Signet's Prometheus metrics on a registry of their own (never prom-client's global one), so
 * tests and several servers in one process do not share counters.
 */
export class SignetMetrics {
  readonly registry = new Registry();
  readonly admissions: Counter<'endpoint' | 'decision' | 'rule' | 'kind'>;
  readonly admissionDuration: Histogram<'endpoint'>;
  readonly verificationDuration: Histogram<'result'>;
  readonly cacheLookups: Counter<'result'>;
  readonly registryErrors: Counter<'class'>;
  readonly policies: Gauge<'state'>;
  readonly kmsFetches: Counter<'result'>;
  readonly kmsKeysStale: Gauge;
  readonly trustRootRefreshes: Counter<'result'>;
  readonly trustRootsStale: Gauge;
  readonly inFlight: Gauge;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'signet_' });
    this.admissions = new Counter({
      name: 'signet_admission_requests_total',
      help: 'Admission reviews answered, by endpoint, decision (allowed, denied, warned, error), rule or failure class, and kind.',
      labelNames: ['endpoint', 'decision', 'rule', 'kind'],
      registers,
    });
    this.admissionDuration = new Histogram({
      name: 'signet_admission_duration_seconds',
      help: 'Time from receiving a review to answering it.',
      labelNames: ['endpoint'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.verificationDuration = new Histogram({
      name: 'signet_verification_duration_seconds',
      help: 'Time to verify one image against its policies, by result (pass, policy, infrastructure).',
      labelNames: ['result'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.cacheLookups = new Counter({
      name: 'signet_verification_cache_total',
      help: 'Verification cache lookups by result (hit, miss, shared: joined an identical verification in flight).',
      labelNames: ['result'],
      registers,
    });
    this.registryErrors = new Counter({
      name: 'signet_registry_errors_total',
      help: 'Registry errors by class (timeout, unreachable, unauthorized, malformed, ...).',
      labelNames: ['class'],
      registers,
    });
    this.policies = new Gauge({
      name: 'signet_policies',
      help: 'ClusterImagePolicies known, by state (active, invalid).',
      labelNames: ['state'],
      registers,
    });
    this.kmsFetches = new Counter({
      name: 'signet_kms_key_fetches_total',
      help: 'Fetches of KMS public keys (key.kms) by result (ok, failed); failures keep the last good key.',
      labelNames: ['result'],
      registers,
    });
    this.kmsKeysStale = new Gauge({
      name: 'signet_kms_keys_stale',
      help: 'KMS keys whose last refresh failed, so the last good key is in use.',
      registers,
    });
    this.trustRootRefreshes = new Counter({
      name: 'signet_trust_root_refreshes_total',
      help: 'TUF refreshes of the default trust root and remote TrustRoots, by result (ok, failed).',
      labelNames: ['result'],
      registers,
    });
    this.trustRootsStale = new Gauge({
      name: 'signet_trust_roots_stale',
      help: 'TUF-served trust roots whose last refresh failed: the last good root, the cache or the embedded root is in use.',
      registers,
    });
    this.inFlight = new Gauge({
      name: 'signet_admission_in_flight',
      help: 'Reviews being answered now.',
      registers,
    });
  }
}
