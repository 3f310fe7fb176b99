// Builds the background scanner from a cluster connection and the running admission parts; loaded
// only when Signet reads a cluster and scanning is on.
import { hostname } from 'node:os';
import type { KubeApi } from '../kube/kube-api.js';
import { LeaderLease } from '../kube/leader-lease.js';
import type { Logger } from '../logger.js';
import type { SignetMetrics } from '../metrics.js';
import type { Admission } from '../signet.js';
import type { AuditServeConfig } from './audit-flags.js';
import { AuditMetrics } from './audit-metrics.js';
import { BackgroundScanner } from './background-scanner.js';
import { ClusterInventory } from './cluster-inventory.js';
import { NonComplianceEvents } from './noncompliance-events.js';
import { ReportPublisher } from './report-publisher.js';

export interface ScannerSetup {
  readonly api: KubeApi;
  readonly admission: Admission;
  readonly logger: Logger;
  readonly metrics: SignetMetrics;
  readonly config: AuditServeConfig;
  /** Signet's namespace: the Lease lives here; never audited. */
  readonly namespace: string;
}

export function createBackgroundScanner(setup: ScannerSetup): BackgroundScanner {
  const { api, admission, config, namespace } = setup;
  const logger = setup.logger.child({ component: 'audit' });
  let scanner: BackgroundScanner | undefined;
  // The same Lease protocol as policy status (ADR 0011), its own Lease, held 30 s.
  const lease = new LeaderLease({
    api,
    namespace,
    name: config.leaseName,
    identity: config.identity ?? `${hostname()}-${process.pid}`,
    logger,
    durationMs: 30_000,
    onChange: (leading) => scanner?.leadershipChanged(leading),
  });
  scanner = new BackgroundScanner(
    {
      store: admission.store,
      service: admission.service,
      inventory: new ClusterInventory(api),
      publisher: new ReportPublisher(api, logger),
      events: new NonComplianceEvents(api, logger),
      lease,
      metrics: new AuditMetrics(setup.metrics.registry),
      logger,
    },
    {
      intervalMs: config.intervalMs,
      allNamespaces: config.allNamespaces,
      concurrency: config.concurrency,
      timeoutMs: 30_000,
      limits: { maxResults: config.maxResults },
      signetNamespace: namespace,
    },
  );
  return scanner;
}
