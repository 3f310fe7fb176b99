import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { AuditMetrics } from '../../src/audit/audit-metrics.js';
import type { ObjectAudit } from '../../src/audit/auditor.js';

function failing(namespace: string, workload: string, policy: string): ObjectAudit {
  return {
    namespace,
    kind: 'Pod',
    name: `${workload}-pod`,
    uid: undefined,
    owner: { kind: 'Deployment', name: workload },
    result: 'fail',
    findings: [{ path: 'p', image: 'i', policy, result: 'fail', reason: 'r' }],
  };
}

describe('audit metrics', () => {
  it('keep the namespaces and policies with most failing workloads, the rest as "other"', async () => {
    const registry = new Registry();
    const metrics = new AuditMetrics(registry, { topNamespaces: 2, topPolicies: 1 });
    const audits = [
      failing('a', 'w1', 'p1'),
      failing('a', 'w2', 'p1'),
      failing('a', 'w2', 'p1'),
      failing('b', 'w1', 'p1'),
      failing('b', 'w2', 'p2'),
      failing('c', 'w1', 'p1'),
      failing('d', 'w1', 'p1'),
      { ...failing('e', 'ok', 'p1'), result: 'pass' as const, findings: [] },
    ];
    metrics.record(audits, new Date(10_000), 1500);
    const values = (await metrics.nonCompliant.get()).values.map((v) => [
      v.labels.namespace,
      v.labels.policy,
      v.value,
    ]);
    expect(values.sort()).toEqual([
      ['a', 'p1', 2],
      ['b', 'other', 1],
      ['b', 'p1', 1],
      ['other', 'p1', 2],
    ]);
    const text = await registry.metrics();
    expect(text).toContain('signet_audit_last_scan_timestamp_seconds 10');
    expect(text).toContain('signet_audit_last_scan_duration_seconds 1.5');
    expect(text).toContain('signet_audit_objects{result="fail"} 7');
    // The next scan replaces the previous one's series.
    metrics.record([], new Date(20_000), 10);
    expect((await metrics.nonCompliant.get()).values).toEqual([]);
  });
});
