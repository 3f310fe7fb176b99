// The result of one audit, and what it means for a CI job (the exit code).
import type { ObjectAudit } from './auditor.js';
import type { DrainRisk } from './drain-risk.js';
import type { AuditResult } from './findings.js';

/** A namespace as the webhook sees it: opted in (intercepted), or only previewed. */
export interface NamespaceState {
  readonly name: string;
  /** Labelled `policy.sigstore.dev/include=true` and not excluded: Signet admits its writes. */
  readonly optedIn: boolean;
  /** Signet's own namespace and kube-system are never intercepted, whatever their labels. */
  readonly excluded?: boolean;
}

export interface AuditReport {
  readonly generatedAt: string;
  /** Namespaces of the cluster audited (empty for manifests). */
  readonly namespaces: readonly NamespaceState[];
  readonly objects: readonly ObjectAudit[];
  /** Objects by their result. */
  readonly summary: Readonly<Record<AuditResult, number>>;
  /** Workloads by whether their next replacement Pod would be admitted now (when judged). */
  readonly drain?: Readonly<Record<DrainRisk['next'], number>>;
}

export function auditReport(
  objects: readonly ObjectAudit[],
  namespaces: readonly NamespaceState[],
  now: Date = new Date(),
): AuditReport {
  const summary: Record<AuditResult, number> = { pass: 0, fail: 0, warn: 0, infrastructure: 0 };
  for (const object of objects) summary[object.result]++;
  const judged = objects.flatMap((o) => (o.drain ? [o.drain.next] : []));
  if (judged.length === 0) return { generatedAt: now.toISOString(), namespaces, objects, summary };
  const drain: Record<DrainRisk['next'], number> = { admitted: 0, grace: 0, denied: 0 };
  for (const next of judged) drain[next]++;
  return { generatedAt: now.toISOString(), namespaces, objects, summary, drain };
}

/**
 * `signet audit`'s exit code: 0 when nothing would be denied (passes and warnings), 1 when
 * something fails policy, 3 when nothing fails but something could not be checked (an
 * infrastructure failure says nothing about compliance, so it is not a 1).
 */
export function exitCodeOf(report: AuditReport): number {
  if (report.summary.fail > 0) return 1;
  if (report.summary.infrastructure > 0) return 3;
  return 0;
}
