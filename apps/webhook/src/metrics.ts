import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** The label value of everything past a label's bound. */
export const OTHER_LABEL = '_other';

/**
 * A label whose values come from outside (namespaces in requests, policy names): the first `max`
 * distinct values are kept, later ones count as {@link OTHER_LABEL}, and a value that is not of
 * the expected shape is never used as a label. Series stay bounded whatever clients send.
 */
export class BoundedLabel {
  readonly #seen = new Set<string>();
  readonly #max: number;
  readonly #shape: RegExp;

  constructor(max: number, shape: RegExp) {
    this.#max = max;
    this.#shape = shape;
  }

  value(raw: string | undefined): string {
    if (raw === undefined || raw === '') return 'none';
    if (this.#seen.has(raw)) return raw;
    if (!this.#shape.test(raw) || this.#seen.size >= this.#max) return OTHER_LABEL;
    this.#seen.add(raw);
    return raw;
  }
}

/** A namespace name: a DNS label (RFC 1123), at most 63 characters. */
const NAMESPACE_SHAPE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** A Kubernetes object name: a DNS subdomain, at most 253 characters. */
const OBJECT_NAME_SHAPE = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
/** A policy's name as verdicts give it: a ClusterImagePolicy's, or `namespace/name` of an ImagePolicy. */
const POLICY_NAME_SHAPE = /^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/)?[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export interface SignetMetricsOptions {
  readonly defaultMetrics?: boolean;
  /** `signet_build_info` labels. */
  readonly build?: { readonly version: string; readonly revision?: string };
  /** Distinct namespaces counted by name (default 200). */
  readonly maxNamespaces?: number;
  /** Distinct policies counted by name (default 500). */
  readonly maxPolicies?: number;
  /** Distinct ImagePolicyExceptions counted by name (default 200). */
  readonly maxExceptions?: number;
}

/**
 * Signet's Prometheus metrics on a registry of their own (never prom-client's global one), so
 * tests and several servers in one process do not share counters. Every label has a bounded set
 * of values (docs/operations.md lists them).
 */
export class SignetMetrics {
  readonly registry = new Registry();
  readonly admissions: Counter<'endpoint' | 'decision' | 'rule' | 'kind'>;
  readonly namespaceAdmissions: Counter<'namespace' | 'decision'>;
  readonly policyResults: Counter<'policy' | 'result'>;
  readonly exceptionUses: Counter<'namespace' | 'exception'>;
  readonly admissionDuration: Histogram<'endpoint'>;
  readonly verificationDuration: Histogram<'result'>;
  readonly cacheLookups: Counter<'result'>;
  readonly registryErrors: Counter<'class'>;
  readonly policies: Gauge<'state'>;
  readonly kmsFetches: Counter<'result'>;
  readonly kmsKeysStale: Gauge;
  readonly trustRootRefreshes: Counter<'result'>;
  readonly trustRootsStale: Gauge<'using'>;
  readonly inFlight: Gauge;
  readonly connections: Counter<'client'>;
  readonly connectionsRefused: Counter<'reason'>;
  readonly openConnections: Gauge;
  readonly ready: Gauge;
  readonly statusWrites: Counter<'kind' | 'result'>;
  readonly statusLeader: Gauge;
  readonly servingCertificateExpiry: Gauge;
  readonly buildInfo: Gauge<'version' | 'revision' | 'node'>;
  /** Bounds the `namespace` label of {@link namespaceAdmissions}. */
  readonly namespaceLabel: BoundedLabel;
  /** Bounds the `policy` label of {@link policyResults}. */
  readonly policyLabel: BoundedLabel;
  /** Bounds the `exception` label of {@link exceptionUses} (its `namespace` label: {@link namespaceLabel}). */
  readonly exceptionLabel: BoundedLabel;
  #readiness: () => boolean = () => false;
  #openConnections: () => number = () => 0;

  constructor(options: SignetMetricsOptions = {}) {
    const registers = [this.registry];
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'signet_' });
    this.namespaceLabel = new BoundedLabel(options.maxNamespaces ?? 200, NAMESPACE_SHAPE);
    this.policyLabel = new BoundedLabel(options.maxPolicies ?? 500, POLICY_NAME_SHAPE);
    this.exceptionLabel = new BoundedLabel(options.maxExceptions ?? 200, OBJECT_NAME_SHAPE);
    this.admissions = new Counter({
      name: 'signet_admission_requests_total',
      help: 'Admission reviews answered, by endpoint, decision (allowed, denied, warned, error), rule or failure class, and kind.',
      labelNames: ['endpoint', 'decision', 'rule', 'kind'],
      registers,
    });
    this.namespaceAdmissions = new Counter({
      name: 'signet_namespace_admissions_total',
      help: 'Validating reviews by namespace (the first 200 seen; later ones as _other) and decision.',
      labelNames: ['namespace', 'decision'],
      registers,
    });
    this.policyResults = new Counter({
      name: 'signet_policy_results_total',
      help: 'Images checked against a ClusterImagePolicy or ImagePolicy (namespace/name), by policy and result (pass; fail: a policy failure; error: an infrastructure failure).',
      labelNames: ['policy', 'result'],
      registers,
    });
    this.exceptionUses = new Counter({
      name: 'signet_exception_uses_total',
      help: "Policies not applied to an image because an ImagePolicyException exempted it, by the exception's namespace and name (the first 200 of each; later ones as _other).",
      labelNames: ['namespace', 'exception'],
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
      help: 'Registry errors by class (timeout, unreachable, unauthorized, not_found, malformed, ...; cancelled: the review was answered first).',
      labelNames: ['class'],
      registers,
    });
    this.policies = new Gauge({
      name: 'signet_policies',
      help: 'ClusterImagePolicies and ImagePolicies known, by state (active, invalid).',
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
      help: 'TUF refreshes of the default trust root and remote TrustRoots, by result (ok, failed; expired: the mirror serves metadata that has expired, a frozen mirror).',
      labelNames: ['result'],
      registers,
    });
    this.trustRootsStale = new Gauge({
      name: 'signet_trust_roots_stale',
      help: 'TUF-served trust roots whose last refresh failed, by what is in use instead: last_good, cache, fallback (the embedded root), or none (nothing: its metadata expired or was never fetched, and the policies that need it deny as infrastructure failures).',
      labelNames: ['using'],
      registers,
    });
    this.inFlight = new Gauge({
      name: 'signet_admission_in_flight',
      help: 'Reviews being answered now.',
      registers,
    });
    this.connections = new Counter({
      name: 'signet_admission_connections_total',
      help: 'Connections to the admission port past their TLS handshake, by caller: verified (a client certificate the client CA signed) or anonymous.',
      labelNames: ['client'],
      registers,
    });
    this.connectionsRefused = new Counter({
      name: 'signet_admission_connections_refused_total',
      help: 'Connections to the admission port closed before a request, by reason: per-source, capacity, shed (closed in its handshake to make room), handshake-timeout, client-certificate, tls.',
      labelNames: ['reason'],
      registers,
    });
    const openConnections = () => this.#openConnections();
    this.openConnections = new Gauge({
      name: 'signet_admission_connections_open',
      help: 'Connections open on the admission port now.',
      registers,
      collect() {
        this.set(openConnections());
      },
    });
    const readiness = () => this.#readiness();
    this.ready = new Gauge({
      name: 'signet_ready',
      help: '1 when this replica answers reviews with loaded policies (what /readyz says), else 0.',
      registers,
      collect() {
        this.set(readiness() ? 1 : 0);
      },
    });
    this.statusWrites = new Counter({
      name: 'signet_status_writes_total',
      help: 'Writes of status.conditions on ClusterImagePolicies, TrustRoots, ImagePolicies and ImagePolicyExceptions, by kind and result (written, conflict, error).',
      labelNames: ['kind', 'result'],
      registers,
    });
    this.statusLeader = new Gauge({
      name: 'signet_status_leader',
      help: '1 on the replica that holds the status Lease and writes policy status, else 0.',
      registers,
    });
    this.servingCertificateExpiry = new Gauge({
      name: 'signet_serving_certificate_expiry_timestamp_seconds',
      help: 'When the serving certificate the admission port presents expires (Unix time); set each time one is installed (at start, on renewal or a changed file).',
      registers,
    });
    this.buildInfo = new Gauge({
      name: 'signet_build_info',
      help: 'Always 1; the labels say which Signet this is (version, revision) and on which Node.js.',
      labelNames: ['version', 'revision', 'node'],
      registers,
    });
    this.buildInfo.set(
      {
        version: options.build?.version ?? 'unknown',
        revision: options.build?.revision ?? 'unknown',
        node: process.version,
      },
      1,
    );
  }

  /** What `signet_ready` reports at each scrape. */
  reportReadiness(ready: () => boolean): void {
    this.#readiness = ready;
  }

  /** What `signet_admission_connections_open` reports at each scrape. */
  reportOpenConnections(open: () => number): void {
    this.#openConnections = open;
  }
}
