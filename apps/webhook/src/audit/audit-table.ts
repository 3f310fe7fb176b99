// `signet audit`'s table: grouped by namespace and owner workload, one line per image and policy.
// Pods of one workload with the same findings share a line, so a 50-replica Deployment reads as
// one row, not fifty.
import { formatAge } from '@signet/core';
import type { AuditReport } from './audit-report.js';
import type { ObjectAudit } from './auditor.js';
import type { AuditFinding } from './findings.js';

const REASON_WIDTH = 100;

interface Row {
  readonly cells: readonly string[];
}

export function auditTable(report: AuditReport): string {
  const states = new Map(report.namespaces.map((n) => [n.name, n]));
  const byNamespace = new Map<string, ObjectAudit[]>();
  for (const object of report.objects) {
    const list = byNamespace.get(object.namespace) ?? [];
    list.push(object);
    byNamespace.set(object.namespace, list);
  }
  const out: string[] = [];
  for (const namespace of [...byNamespace.keys()].sort()) {
    const state = states.get(namespace);
    const note =
      state === undefined
        ? ''
        : state.excluded
          ? ' (never intercepted by Signet)'
          : state.optedIn
            ? ' (opted in)'
            : ' (not opted in: what labelling it policy.sigstore.dev/include=true would do)';
    out.push(`NAMESPACE ${namespace}${note}`);
    out.push(...render(rowsOf(byNamespace.get(namespace) ?? [])), '');
  }
  const { pass, fail, warn, infrastructure } = report.summary;
  const total = report.objects.length;
  out.push(
    `${total} objects: ${pass} pass, ${fail} fail, ${warn} warn, ${infrastructure} infrastructure` +
      (fail > 0 ? ` (${fail} would be denied)` : ''),
  );
  const drain = report.drain;
  if (drain !== undefined && drain.admitted + drain.grace + drain.denied > 0) {
    out.push(
      `next Pod of ${drain.admitted + drain.grace + drain.denied} workloads (a drain, an eviction): ` +
        `${drain.admitted} admitted, ${drain.grace} only on a verification record, ${drain.denied} denied`,
    );
  }
  return out.join('\n');
}

function rowsOf(objects: readonly ObjectAudit[]): Row[] {
  const byOwner = new Map<string, ObjectAudit[]>();
  for (const object of objects) {
    const key = `${object.owner.kind}/${object.owner.name}`;
    const list = byOwner.get(key) ?? [];
    list.push(object);
    byOwner.set(key, list);
  }
  const rows: Row[] = [{ cells: ['WORKLOAD', 'OBJECT', 'IMAGE', 'POLICY', 'RESULT', 'NEXT POD', 'REASON'] }];
  for (const owner of [...byOwner.keys()].sort()) {
    let first = true;
    // The workload's own template first, then the Pods it runs.
    const groups = groupAlike(byOwner.get(owner) ?? []).sort(
      (a, b) => Number(!isOwner(a[0], owner)) - Number(!isOwner(b[0], owner)),
    );
    for (const group of groups) {
      for (const cells of groupRows(group)) {
        rows.push({ cells: [first ? owner : '', ...cells] });
        first = false;
      }
    }
  }
  return rows;
}

/** One row per finding of a group of alike objects (without the WORKLOAD cell). */
function groupRows(group: readonly ObjectAudit[]): string[][] {
  const findings = group[0]?.findings ?? [];
  const label = objectLabel(group);
  const drain = drainLabel(group[0]);
  const lines = findings.length > 0 ? findings : [undefined];
  return lines.map((finding, index) => [
    index === 0 ? label : '',
    finding ? imageLabel(finding) : '(no images)',
    finding?.policy || (finding ? '-' : ''),
    finding?.result ?? 'pass',
    index === 0 ? drain : '',
    truncate(finding?.reason ?? ''),
  ]);
}

/** Whether the workload's next replacement Pod would be admitted now (drain risk), on its own row. */
function drainLabel(object: ObjectAudit | undefined): string {
  const drain = object?.drain;
  if (drain === undefined) return '';
  if (drain.next === 'grace') return `grace (${formatAge(drain.recordAgeMs ?? 0)} old record)`;
  return drain.next;
}

function isOwner(object: ObjectAudit | undefined, owner: string): boolean {
  return object !== undefined && `${object.kind}/${object.name}` === owner;
}

/** Objects of one kind with identical findings, in first-seen order. */
function groupAlike(objects: readonly ObjectAudit[]): ObjectAudit[][] {
  const groups = new Map<string, ObjectAudit[]>();
  for (const object of objects) {
    const key = `${object.kind}\n${JSON.stringify(object.findings)}\n${JSON.stringify(object.drain ?? null)}`;
    const list = groups.get(key) ?? [];
    list.push(object);
    groups.set(key, list);
  }
  return [...groups.values()];
}

function objectLabel(group: readonly ObjectAudit[]): string {
  const [first] = group;
  if (first === undefined) return '';
  if (group.length === 1) return `${first.kind}/${first.name}`;
  return `${group.length} ${first.kind}s (${first.name}, ...)`;
}

/** `host/repo@sha256:0123456789ab` (12 hex digits), and the tag it was named by if it moved. */
function imageLabel(finding: AuditFinding): string {
  const short = finding.image.replace(/@sha256:([0-9a-f]{12})[0-9a-f]{52}$/, '@sha256:$1');
  return finding.specImage === undefined ? short : `${short} (spec: ${finding.specImage})`;
}

function truncate(text: string): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length > REASON_WIDTH ? `${line.slice(0, REASON_WIDTH - 1)}…` : line;
}

function render(rows: readonly Row[]): string[] {
  const widths: number[] = [];
  for (const row of rows)
    row.cells.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  return rows.map((row) =>
    row.cells
      .map((cell, i) => (i === row.cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}
