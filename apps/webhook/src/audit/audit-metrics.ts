// The background scan's metrics, on Signet's registry. Labels are bounded: the namespaces with the
// most non-compliant workloads keep their name (`topNamespaces`), the rest are summed as `other`;
// likewise policies beyond `topPolicies`.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ObjectAudit } from './auditor.js';
import type { AuditResult } from './findings.js';

export const OTHER = 'other';

export interface AuditMetricsOptions {
  readonly topNamespaces?: number;
  readonly topPolicies?: number;
}

export class AuditMetrics {
  readonly nonCompliant: Gauge<'namespace' | 'policy'>;
  readonly objects: Gauge<'result'>;
  readonly lastScan: Gauge;
  readonly scanDuration: Gauge;
  readonly scans: Counter<'outcome'>;
  readonly leading: Gauge;
  readonly #topNamespaces: number;
  readonly #topPolicies: number;

  constructor(registry: Registry, options: AuditMetricsOptions = {}) {
    const registers = [registry];
    this.#topNamespaces = options.topNamespaces ?? 20;
    this.#topPolicies = options.topPolicies ?? 50;
    this.nonCompliant = new Gauge({
      name: 'signet_audit_noncompliant_workloads',
      help: `Workloads failing a policy at the last scan, by namespace (the ${this.#topNamespaces} with most, the rest as "other") and policy.`,
      labelNames: ['namespace', 'policy'],
      registers,
    });
    this.objects = new Gauge({
      name: 'signet_audit_objects',
      help: 'Objects (workloads and Pods) at the last scan, by result (pass, fail, warn, infrastructure).',
      labelNames: ['result'],
      registers,
    });
    this.lastScan = new Gauge({
      name: 'signet_audit_last_scan_timestamp_seconds',
      help: 'When the last complete scan finished (Unix time).',
      registers,
    });
    this.scanDuration = new Gauge({
      name: 'signet_audit_last_scan_duration_seconds',
      help: 'How long the last complete scan took.',
      registers,
    });
    this.scans = new Counter({
      name: 'signet_audit_scans_total',
      help: 'Background scans by outcome (completed, failed, abandoned: the Lease was lost).',
      labelNames: ['outcome'],
      registers,
    });
    this.leading = new Gauge({
      name: 'signet_audit_lease_held',
      help: '1 while this replica holds the scan Lease (and so is the one that scans).',
      registers,
    });
  }

  /** Replaces the per-scan gauges with what `audits` say. */
  record(audits: readonly ObjectAudit[], finishedAt: Date, durationMs: number): void {
    const byResult: Record<AuditResult, number> = { pass: 0, fail: 0, warn: 0, infrastructure: 0 };
    // Failing workloads: namespace -> policy -> workload keys.
    const failing = new Map<string, Map<string, Set<string>>>();
    for (const audit of audits) {
      byResult[audit.result]++;
      for (const finding of audit.findings) {
        if (finding.result !== 'fail') continue;
        const policies = failing.get(audit.namespace) ?? new Map<string, Set<string>>();
        const workloads = policies.get(finding.policy) ?? new Set<string>();
        workloads.add(`${audit.owner.kind}/${audit.owner.name}`);
        policies.set(finding.policy, workloads);
        failing.set(audit.namespace, policies);
      }
    }
    this.nonCompliant.reset();
    const total = (policies: Map<string, Set<string>>) =>
      [...policies.values()].reduce((sum, workloads) => sum + workloads.size, 0);
    const namespaces = [...failing.entries()].sort(
      (a, b) => total(b[1]) - total(a[1]) || a[0].localeCompare(b[0]),
    );
    const policyTotals = new Map<string, number>();
    for (const [, policies] of namespaces)
      for (const [policy, workloads] of policies)
        policyTotals.set(policy, (policyTotals.get(policy) ?? 0) + workloads.size);
    const keptPolicies = new Set(
      [...policyTotals.entries()]
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .slice(0, this.#topPolicies)
        .map(([policy]) => policy),
    );
    namespaces.forEach(([namespace, policies], rank) => {
      const label = rank < this.#topNamespaces ? namespace : OTHER;
      for (const [policy, workloads] of policies) {
        const policyLabel = keptPolicies.has(policy) ? policy || '(no policy)' : OTHER;
        this.nonCompliant.inc({ namespace: label, policy: policyLabel }, workloads.size);
      }
    });
    for (const [result, count] of Object.entries(byResult)) this.objects.set({ result }, count);
    this.lastScan.set(finishedAt.getTime() / 1000);
    this.scanDuration.set(durationMs / 1000);
  }
}
