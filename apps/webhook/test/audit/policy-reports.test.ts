import { describe, expect, it } from 'vitest';
import type { ObjectAudit } from '../../src/audit/auditor.js';
import { policyReportFor, TRUNCATED_ANNOTATION } from '../../src/audit/policy-reports.js';

const now = new Date('2026-01-02T03:04:05.678Z');

function pod(
  name: string,
  owner: string,
  result: ObjectAudit['result'],
  image = 'reg/app@sha256:1',
): ObjectAudit {
  return {
    namespace: 'shop',
    kind: 'Pod',
    name,
    uid: `uid-${name}`,
    owner: { kind: 'Deployment', name: owner },
    result,
    findings: [
      { path: 'spec.containers[0].image', image, policy: 'release', result, reason: `${result} reason` },
    ],
  };
}

describe('PolicyReports', () => {
  it('files objects of one workload with the same finding under one result, failures first', () => {
    const report = policyReportFor(
      'shop',
      [
        pod('web-1', 'web', 'pass'),
        pod('web-2', 'web', 'pass'),
        pod('db-1', 'db', 'fail'),
        pod('q-1', 'q', 'infrastructure'),
      ],
      { optedIn: false, now },
    );
    expect(report.apiVersion).toBe('wgpolicyk8s.io/v1alpha2');
    expect(report.metadata).toEqual({
      name: 'signet-audit',
      namespace: 'shop',
      labels: { 'app.kubernetes.io/managed-by': 'signet', 'signet.dev/preflight': 'true' },
      annotations: {},
    });
    expect(report.summary).toEqual({ pass: 1, fail: 1, warn: 0, error: 1, skip: 0 });
    expect(report.results.map((r) => [r.properties.workload, r.result])).toEqual([
      ['Deployment/db', 'fail'],
      ['Deployment/q', 'error'],
      ['Deployment/web', 'pass'],
    ]);
    expect(report.results[0]).toMatchObject({
      policy: 'release',
      severity: 'high',
      source: 'signet',
      timestamp: { seconds: 1767323045, nanos: 0 },
      message: 'fail reason',
    });
    expect(report.results[2]?.resources).toEqual([
      { apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: 'web-1', uid: 'uid-web-1' },
      { apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: 'web-2', uid: 'uid-web-2' },
    ]);
  });

  it('bounds results and resources; the summary counts everything', () => {
    const many = Array.from({ length: 30 }, (_, i) =>
      pod(`p-${i}`, `w-${i % 10}`, i % 2 ? 'fail' : 'pass', `reg/a@sha256:${i % 3}`),
    );
    const wide = Array.from({ length: 25 }, (_, i) => pod(`big-${i}`, 'big', 'fail', 'reg/big@sha256:0'));
    const report = policyReportFor('shop', [...many, ...wide], {
      optedIn: true,
      now,
      limits: { maxResults: 4, maxResources: 3 },
    });
    expect(report.results).toHaveLength(4);
    expect(report.results.every((r) => r.result === 'fail')).toBe(true);
    const total = Object.values(report.summary).reduce((a, b) => a + b, 0);
    expect(report.metadata.annotations[TRUNCATED_ANNOTATION]).toBe(String(total - 4));
    const big = report.results.find((r) => r.properties.workload === 'Deployment/big');
    expect(big?.resources).toHaveLength(3);
    expect(big?.properties.objects).toBe('25');
  });
});
