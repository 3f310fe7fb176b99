// Builds the background scanner from a cluster connection and the running admission parts; loaded
// only when Signet reads a cluster and scanning is on. The scanner is a leader-only part: the
// process's leader elector runs it while this replica holds the scan Lease.
import type { AdmissionService } from '../admission/admission-service.js';
import type { AuditServeConfig } from '../config.js';
import type { KubeApi } from '../kube/kube-api.js';
import type { Logger } from '../logger.js';
import type { SignetMetrics } from '../metrics.js';
import type { PolicyStore } from '../policy/policy-store.js';
import { AuditMetrics } from './audit-metrics.js';
import { BackgroundScanner } from './background-scanner.js';
import { ClusterInventory } from './cluster-inventory.js';
import { NonComplianceEvents } from './noncompliance-events.js';
import { ReportPublisher } from './report-publisher.js';

export interface ScannerSetup {
  readonly api: KubeApi;
  readonly store: PolicyStore;
  readonly service: Pick<AdmissionService, 'review'>;
  readonly logger: Logger;
  readonly metrics: SignetMetrics;
  readonly config: AuditServeConfig;
  /** Signet's namespace: the Lease lives here; never audited. */
  readonly namespace: string;
}

export function createBackgroundScanner(setup: ScannerSetup): BackgroundScanner {
  const { api, config, namespace } = setup;
  const logger = setup.logger.child({ component: 'audit' });
  return new BackgroundScanner(
    {
      store: setup.store,
      service: setup.service,
      inventory: new ClusterInventory(api),
      publisher: new ReportPublisher(api, logger),
      events: new NonComplianceEvents(api, logger),
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
      // The same Lease protocol as policy status (ADR 0011), its own Lease, held 30 s.
      election: { lease: config.leaseName, durationMs: 30_000 },
    },
  );
}
