// The server's background audit: on a jittered schedule and when policies change, the replica
// holding the scan Lease (a leader-only part: started when it takes the Lease, stopped when it
// loses it) re-verifies what runs in opted-in namespaces (or, for preflight, in every
// namespace Signet could intercept) through the admission pipeline, sharing its verification cache
// and bounded by its own concurrency, then publishes PolicyReports, metrics and Events.

import { exceptionState } from '@signet/core';
import type { AdmissionService } from '../admission/admission-service.js';
import type { Election, Part } from '../lifecycle/part.js';
import type { Logger } from '../logger.js';
import { nextExceptionExpiry } from '../policy/namespaced-status.js';
import type { PolicySnapshot, PolicyStore } from '../policy/policy-store.js';
import type { AuditMetrics } from './audit-metrics.js';
import { auditSubjectsWith, type ObjectAudit } from './auditor.js';
import type { ClusterInventory } from './cluster-inventory.js';
import { failingWorkloads, type NonComplianceEvents } from './noncompliance-events.js';
import { policyReportFor, type ReportLimits } from './policy-reports.js';
import type { ReportPublisher } from './report-publisher.js';
import { auditSubjects } from './subjects.js';

export interface ScanSettings {
  /** Time between scans (before jitter); 0 scans only when policies change. */
  readonly intervalMs: number;
  /** Every namespace Signet could intercept, not only opted-in ones (preflight reports). */
  readonly allNamespaces: boolean;
  /** Objects judged at once. */
  readonly concurrency: number;
  /** Time per object and endpoint. */
  readonly timeoutMs: number;
  readonly limits: ReportLimits;
  /** Signet's namespace (never audited). */
  readonly signetNamespace: string;
  /** Wait after a policy change before scanning (changes come in bursts). */
  readonly debounceMs?: number;
  /** The Lease that lets one replica scan at a time. */
  readonly election: Election;
}

export interface BackgroundScannerParts {
  readonly store: PolicyStore;
  readonly service: Pick<AdmissionService, 'review'>;
  readonly inventory: Pick<ClusterInventory, 'read'>;
  readonly publisher: ReportPublisher;
  readonly events: NonComplianceEvents;
  readonly metrics: AuditMetrics;
  readonly logger: Logger;
  readonly random?: () => number;
}

/**
 * What makes the policies differ for verification: each policy's revision (ImagePolicies too), the
 * exceptions and whether each applies at `now` (one that expired changes what a scan finds), and
 * the no-match policy.
 */
export function fingerprintOf(snapshot: PolicySnapshot, now = Date.now()): string {
  const set = snapshot.policySet;
  const revisions = [...set.policies, ...[...set.namespaced.values()].flat()]
    .map((p) => p.compiled.revision)
    .sort();
  const exceptions = [...set.exceptions.values()]
    .flat()
    .map((e) => [e.name, e.exception.spec, exceptionState(e, now, set.maxExceptionLifetimeMs)]);
  return JSON.stringify([revisions, exceptions, snapshot.config.noMatchPolicy]);
}

/** The longest a timer is set for (Node's timers hold at most about 24.8 days). */
const MAX_TIMER_MS = 24 * 60 * 60 * 1000;

export class BackgroundScanner implements Part {
  readonly name = 'background audit';
  readonly leader: Election;
  readonly #parts: BackgroundScannerParts;
  readonly #settings: ScanSettings;
  readonly #random: () => number;
  #timer: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;
  /** At the next exception expiry: the reports still show what it exempted until a scan. */
  #expiry: NodeJS.Timeout | undefined;
  /** Scans failed in a row: the next try waits 5 s, doubling up to 5 minutes. */
  #failures = 0;
  #debounce: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  /** This replica holds the scan Lease: between `start` and `stop`. */
  #leading = false;
  /** Aborts when the Lease is lost or Signet stops: a scan in progress ends unpublished. */
  #term: AbortSignal | undefined;
  #scannedPolicies: string | undefined;
  /** Workloads failing at this replica's last scan; `undefined` until it has read the reports. */
  #failing: Set<string> | undefined;

  constructor(parts: BackgroundScannerParts, settings: ScanSettings) {
    this.leader = settings.election;
    this.#parts = parts;
    this.#settings = settings;
    this.#random = parts.random ?? Math.random;
  }

  /** The Lease was taken: this replica scans soon rather than an interval later, then on schedule. */
  start(term: AbortSignal): void {
    this.#leading = true;
    this.#term = term;
    this.#parts.metrics.leading.set(1);
    this.#scannedPolicies = undefined;
    this.#schedule();
    this.policiesChanged();
  }

  /** The Lease was lost (or Signet stops): no more scans; the one in progress is abandoned. */
  async stop(): Promise<void> {
    this.#leading = false;
    this.#parts.metrics.leading.set(0);
    this.#failing = undefined;
    clearTimeout(this.#timer);
    clearTimeout(this.#retry);
    clearTimeout(this.#debounce);
    clearTimeout(this.#expiry);
    await this.#running?.catch(() => undefined);
  }

  /** Call after each policy install: scans soon when what verification depends on changed. */
  policiesChanged(): void {
    const snapshot = this.#parts.store.current;
    if (!this.#leading || snapshot === undefined || fingerprintOf(snapshot) === this.#scannedPolicies) return;
    clearTimeout(this.#debounce);
    this.#debounce = setTimeout(() => this.trigger(), this.#settings.debounceMs ?? 2000);
    this.#debounce.unref();
  }

  /** Scans now (or right after the scan in progress). */
  trigger(): Promise<void> {
    if (!this.#leading) return Promise.resolve();
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#scanRepeatedly().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  #schedule(): void {
    if (!this.#leading || this.#settings.intervalMs <= 0) return;
    // Up to 10% later, so replicas restarted together do not scan (and hit registries) in step.
    const delay = this.#settings.intervalMs * (1 + 0.1 * this.#random());
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      void this.trigger().finally(() => this.#schedule());
    }, delay);
    this.#timer.unref();
  }

  async #scanRepeatedly(): Promise<void> {
    do {
      this.#again = false;
      await this.#scanOnce();
    } while (this.#again && this.#leading);
  }

  async #scanOnce(): Promise<void> {
    const { metrics, logger, store } = this.#parts;
    const snapshot = store.current;
    if (!this.#leading || snapshot === undefined) return;
    const started = Date.now();
    const fingerprint = fingerprintOf(snapshot, started);
    try {
      const audits = await this.#audit();
      if (!this.#leading) {
        this.#abandoned();
        return;
      }
      const published = await this.#publish(audits.namespaces, audits.objects);
      const finished = new Date();
      metrics.record(audits.objects, finished, finished.getTime() - started);
      metrics.scans.inc({ outcome: 'completed' });
      this.#scannedPolicies = fingerprint;
      this.#failures = 0;
      this.#scanAtNextExpiry(snapshot, started);
      logger.info(
        {
          namespaces: audits.namespaces.length,
          objects: audits.objects.length,
          failing: audits.objects.filter((o) => o.result === 'fail').length,
          infrastructure: audits.objects.filter((o) => o.result === 'infrastructure').length,
          reports: published.reports,
          events: published.events,
          durationMs: finished.getTime() - started,
        },
        'audit scan finished',
      );
    } catch (error) {
      if (!this.#leading) {
        this.#abandoned();
        return;
      }
      metrics.scans.inc({ outcome: 'failed' });
      // An API server that is starting or a CRD just created (429), a timeout: try again soon,
      // backing off, rather than an interval later.
      const retryMs = Math.min(5000 * 2 ** this.#failures, 5 * 60_000);
      this.#failures++;
      logger.error({ err: error, retryMs }, 'audit scan failed');
      clearTimeout(this.#retry);
      this.#retry = setTimeout(() => void this.trigger(), retryMs);
      this.#retry.unref();
    }
  }

  /** After a scan that began at `scanned`: a scan again when an exception active then expires. */
  #scanAtNextExpiry(snapshot: PolicySnapshot, scanned: number): void {
    clearTimeout(this.#expiry);
    const next = nextExceptionExpiry(snapshot, scanned);
    if (next === undefined) return;
    const delay = Math.max(0, Math.min(next - Date.now() + 100, MAX_TIMER_MS));
    this.#expiry = setTimeout(() => this.policiesChanged(), delay);
    this.#expiry.unref();
  }

  #abandoned(): void {
    this.#parts.metrics.scans.inc({ outcome: 'abandoned' });
    this.#parts.logger.warn(
      { reason: (this.#term?.reason as Error | undefined)?.message },
      'scan Lease lost during the scan; not publishing it',
    );
  }

  async #audit() {
    const { inventory, service } = this.#parts;
    const settings = this.#settings;
    const { namespaces, objects } = await inventory.read({
      optedInOnly: !settings.allNamespaces,
      signetNamespace: settings.signetNamespace,
    });
    const subjects = auditSubjects(objects, { namespace: 'default' });
    const audited = await auditSubjectsWith(subjects, {
      service,
      concurrency: settings.concurrency,
      timeoutMs: settings.timeoutMs,
      ...(this.#term ? { signal: this.#term } : {}),
    });
    return { namespaces, objects: audited };
  }

  async #publish(
    namespaces: readonly { name: string; optedIn: boolean }[],
    audits: readonly ObjectAudit[],
  ): Promise<{ reports: number; events: number }> {
    const { publisher, events } = this.#parts;
    const apis = await publisher.servedApis();
    const [primary] = apis;
    if (this.#failing === undefined && primary !== undefined) {
      // A new leader: what the reports already say has had its Event.
      const known = await publisher.knownFailures(primary);
      this.#failing = new Set(
        [...known.entries()].flatMap(([ns, workloads]) => [...workloads].map((w) => `${ns}/${w}`)),
      );
    }
    const byNamespace = new Map<string, ObjectAudit[]>();
    for (const audit of audits)
      byNamespace.set(audit.namespace, [...(byNamespace.get(audit.namespace) ?? []), audit]);
    // A namespace where nothing runs gets no report (and loses the one it had).
    const reported = namespaces.filter((n) => byNamespace.has(n.name));
    const now = new Date();
    for (const { name, optedIn } of reported) {
      const body = policyReportFor(name, byNamespace.get(name) ?? [], {
        optedIn,
        now,
        limits: this.#settings.limits,
      });
      await publisher.publish(apis, body);
    }
    await publisher.prune(apis, new Set(reported.map((n) => n.name)));
    // Events go to opted-in namespaces only: a preflight namespace's report is its preview.
    const optedIn = new Set(namespaces.filter((n) => n.optedIn).map((n) => n.name));
    const failing = failingWorkloads(audits.filter((a) => optedIn.has(a.namespace)));
    const sent = await events.recordNew(failing, this.#failing ?? new Set());
    this.#failing = new Set(failing.keys());
    return { reports: apis.length > 0 ? reported.length : 0, events: sent };
  }
}
