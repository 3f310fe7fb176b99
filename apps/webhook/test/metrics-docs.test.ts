// docs/operations.md's metric table lists every metric Signet registers (its own; prom-client's
// process and Node.js metrics are named as a group), and the dashboard shows what an operator looks
// at first: every endpoint, the event loop and heap, the background audit, stale keys and trust
// roots, the serving certificate's expiry.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AuditMetrics } from '../src/audit/audit-metrics.js';
import { SignetMetrics } from '../src/metrics.js';
import { RecordMetrics } from '../src/records/record-metrics.js';

const operations = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8');
const dashboard = JSON.parse(
  readFileSync(new URL('../../../docs/dashboards/signet.json', import.meta.url), 'utf8'),
) as { panels: { title: string; targets?: { expr: string }[] }[] };

async function registered(): Promise<string[]> {
  const metrics = new SignetMetrics({ defaultMetrics: false });
  new AuditMetrics(metrics.registry);
  new RecordMetrics(metrics.registry, metrics.policyLabel);
  return (await metrics.registry.getMetricsAsJSON()).map((m) => m.name);
}

describe('docs/operations.md', () => {
  it('has a row for every metric Signet registers', async () => {
    const names = await registered();
    expect(names.length).toBeGreaterThan(20);
    const rows = new Set([...operations.matchAll(/^\| `(signet_[a-z_]+)`/gm)].map((m) => m[1]));
    expect(names.filter((name) => !rows.has(name))).toEqual([]);
    expect([...rows].filter((name) => !names.includes(name as string))).toEqual([]);
  });

  it('has a row for every alert of the chart', () => {
    const rule = readFileSync(new URL('../chart/templates/prometheusrule.yaml', import.meta.url), 'utf8');
    const alerts = [...rule.matchAll(/- alert: (\w+)/g)].map((m) => m[1]);
    expect(alerts.length).toBeGreaterThan(10);
    for (const alert of alerts) expect(operations, alert).toMatch(new RegExp(`^\\| \`${alert}\``, 'm'));
  });
});

describe('the dashboard', () => {
  const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  const uses = (pattern: RegExp) => exprs.some((expr) => pattern.test(expr));

  it('shows every endpoint, not only /validate', () => {
    expect(
      uses(/sum by \(le, endpoint\) \(rate\(signet_admission_duration_seconds_bucket\{job=~"\$job"\}/),
    ).toBe(true);
    expect(
      uses(/sum by \(endpoint, decision\) \(rate\(signet_admission_requests_total\{job=~"\$job"\}/),
    ).toBe(true);
  });

  it('shows the event loop, the heap, the audit, stale keys and trust roots, the certificate', () => {
    for (const metric of [
      'signet_nodejs_eventloop_lag_p99_seconds',
      'signet_nodejs_heap_size_used_bytes',
      'signet_audit_noncompliant_workloads',
      'signet_audit_last_scan_timestamp_seconds',
      'signet_audit_objects',
      'signet_audit_scans_total',
      'signet_kms_keys_stale',
      'signet_trust_roots_stale',
      'signet_serving_certificate_expiry_timestamp_seconds',
    ])
      expect(uses(new RegExp(`\\b${metric}\\{`)), metric).toBe(true);
  });
});
