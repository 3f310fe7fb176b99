// The audit of one namespace as a PolicyReport (the Kubernetes policy working group's
// `wgpolicyk8s.io/v1alpha2` format, which `openreports.io/v1alpha1` Report continues). Objects of
// one workload with the same finding share a result, listing them as its resources; results and
// resources per result are bounded, the summary always counts everything.
import type { ObjectAudit } from './auditor.js';
import type { AuditResult } from './findings.js';

export const REPORT_NAME = 'signet-audit';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'signet';
/** On reports of namespaces not opted in: what would happen once they are. */
export const PREFLIGHT_LABEL = 'signet.dev/preflight';
export const TRUNCATED_ANNOTATION = 'signet.dev/results-omitted';

type ReportResult = 'pass' | 'fail' | 'warn' | 'error' | 'skip';

/** `infrastructure` is the format's `error`: the policy could not be evaluated. */
const RESULT: Readonly<Record<AuditResult, ReportResult>> = {
  pass: 'pass',
  fail: 'fail',
  warn: 'warn',
  infrastructure: 'error',
};
const ORDER: readonly ReportResult[] = ['fail', 'error', 'warn', 'pass', 'skip'];

export interface ReportLimits {
  /** Results kept per report (default 500): failures first. */
  readonly maxResults?: number;
  /** Resources listed per result (default 10); `properties.objects` has the full count. */
  readonly maxResources?: number;
}

export interface ReportResource {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
}

export interface PolicyReportResult {
  readonly policy: string;
  readonly result: ReportResult;
  readonly source: 'signet';
  readonly scored: true;
  readonly severity?: 'high';
  readonly timestamp: { readonly seconds: number; readonly nanos: 0 };
  readonly message: string;
  readonly resources: readonly ReportResource[];
  readonly properties: Readonly<Record<string, string>>;
}

export interface PolicyReportBody {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly labels: Readonly<Record<string, string>>;
    readonly annotations: Readonly<Record<string, string>>;
  };
  readonly summary: Readonly<Record<ReportResult, number>>;
  readonly results: readonly PolicyReportResult[];
}

/** The API version of each audited kind, for object references in reports and Events. */
export const API_VERSIONS: Readonly<Record<string, string>> = {
  Pod: 'v1',
  ReplicationController: 'v1',
  Deployment: 'apps/v1',
  ReplicaSet: 'apps/v1',
  StatefulSet: 'apps/v1',
  DaemonSet: 'apps/v1',
  Job: 'batch/v1',
  CronJob: 'batch/v1',
};

interface Group {
  readonly key: string;
  readonly workload: string;
  readonly policy: string;
  readonly result: ReportResult;
  readonly image: string;
  readonly digest: string | undefined;
  readonly specImage: string | undefined;
  readonly reason: string;
  readonly objects: ObjectAudit[];
}

/** The report body of one namespace's audit. */
export function policyReportFor(
  namespace: string,
  audits: readonly ObjectAudit[],
  options: { readonly optedIn: boolean; readonly now: Date; readonly limits?: ReportLimits },
): PolicyReportBody {
  const maxResults = options.limits?.maxResults ?? 500;
  const maxResources = options.limits?.maxResources ?? 10;
  const groups = groupFindings(audits);
  const summary: Record<ReportResult, number> = { pass: 0, fail: 0, warn: 0, error: 0, skip: 0 };
  for (const group of groups) summary[group.result]++;
  groups.sort((a, b) => ORDER.indexOf(a.result) - ORDER.indexOf(b.result) || a.key.localeCompare(b.key));
  const kept = groups.slice(0, maxResults);
  const seconds = Math.floor(options.now.getTime() / 1000);
  const results = kept.map(
    (group): PolicyReportResult => ({
      policy: group.policy || '(no policy)',
      result: group.result,
      source: 'signet',
      scored: true,
      ...(group.result === 'fail' ? { severity: 'high' as const } : {}),
      timestamp: { seconds, nanos: 0 },
      message: group.reason.slice(0, 1024),
      resources: group.objects.slice(0, maxResources).map((o) => ({
        apiVersion: API_VERSIONS[o.kind] ?? 'v1',
        kind: o.kind,
        namespace,
        name: o.name,
        ...(o.uid ? { uid: o.uid } : {}),
      })),
      properties: {
        workload: group.workload,
        image: group.image,
        ...(group.digest ? { digest: group.digest } : {}),
        ...(group.specImage ? { specImage: group.specImage } : {}),
        objects: String(group.objects.length),
      },
    }),
  );
  const omitted = groups.length - kept.length;
  return {
    apiVersion: 'wgpolicyk8s.io/v1alpha2',
    kind: 'PolicyReport',
    metadata: {
      name: REPORT_NAME,
      namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [PREFLIGHT_LABEL]: String(!options.optedIn) },
      annotations: omitted > 0 ? { [TRUNCATED_ANNOTATION]: String(omitted) } : {},
    },
    summary,
    results,
  };
}

function groupFindings(audits: readonly ObjectAudit[]): Group[] {
  const groups = new Map<string, Group>();
  for (const audit of audits) {
    const workload = `${audit.owner.kind}/${audit.owner.name}`;
    const findings = audit.findings.length > 0 ? audit.findings : [undefined];
    for (const finding of findings) {
      const result = RESULT[finding?.result ?? 'pass'];
      const image = finding?.image ?? '';
      const policy = finding?.policy ?? '';
      const reason = finding?.reason ?? 'no images';
      const key = JSON.stringify([workload, policy, result, image, reason]);
      const group = groups.get(key) ?? {
        key,
        workload,
        policy,
        result,
        image,
        digest: finding?.digest,
        specImage: finding?.specImage,
        reason,
        objects: [],
      };
      if (!group.objects.includes(audit)) group.objects.push(audit);
      groups.set(key, group);
    }
  }
  return [...groups.values()];
}
