// The chart's PrometheusRule and Grafana dashboard against Prometheus' own tooling: the rendered
// alerts pass `promtool check rules` and fire (and stay quiet) as `promtool test rules` says on
// series shaped like Signet's; every dashboard query parses as PromQL; every metric either names
// is one Signet exports (read from a real SignetMetrics registry).
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTools, runCommand } from '@signet/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { AuditMetrics } from '../../src/audit/audit-metrics.js';
import { SignetMetrics } from '../../src/metrics.js';
import { CHART_DIR, NAMESPACE, only, RELEASE, renderChart } from './render.js';

interface Rule {
  readonly alert?: string;
  readonly record?: string;
  readonly expr: string;
}

let promtool = '';
let dir = '';
let rules: Rule[] = [];

beforeAll(async () => {
  ({ promtool } = await ensureTools(['promtool'], {
    onProgress: (event) => console.log(`testbed: ${event.message}`),
  }));
  dir = await mkdtemp(join(tmpdir(), 'signet-alerts-'));
  const objects = await renderChart('helm3', { metrics: { prometheusRule: { enabled: true } } });
  const rule = only<{ spec: { groups: { name: string; rules: Rule[] }[] } }>(objects, 'PrometheusRule');
  rules = rule.spec.groups.flatMap((g) => g.rules);
  await writeFile(join(dir, 'rules.yaml'), stringify({ groups: rule.spec.groups }));
  // promtool test rules compares annotations too; the cases check when alerts fire and with which
  // labels, so they run on the rules without their (human) annotations.
  const bare = rule.spec.groups.map((g) => ({
    ...g,
    rules: g.rules.map(({ annotations: _a, ...r }: Rule & { annotations?: unknown }) => r),
  }));
  await writeFile(join(dir, 'bare-rules.yaml'), stringify({ groups: bare }));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const promtoolRun = (args: readonly string[]) =>
  runCommand(promtool, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeoutMs: 60_000, cwd: dir });

const DAY = 86_400;
const job = `job="${RELEASE}-webhook", namespace="${NAMESPACE}"`;
const series = (name: string, labels: string, values: string) => ({
  series: `${name}{${job}${labels ? `, ${labels}` : ''}}`,
  values,
});
/** Alerts that page: every covered write is refused (or about to be). */
const CRITICAL = new Set(['SignetDown', 'SignetServingCertificateExpiring']);
const firing = (alertname: string, at: string, labels: Record<string, string> = {}) => ({
  eval_time: at,
  alertname,
  exp_alerts: [{ exp_labels: { severity: CRITICAL.has(alertname) ? 'critical' : 'warning', ...labels } }],
});
const quiet = (alertname: string, at: string) => ({ eval_time: at, alertname, exp_alerts: [] });

/** One `promtool test rules` case: series, and which alerts fire (or not) when. */
const CASES: Record<string, { input_series: object[]; alert_rule_test: object[] }> = {
  'down: no replica up': {
    input_series: [series('up', 'pod="a"', '0x20')],
    alert_rule_test: [quiet('SignetDown', '4m'), firing('SignetDown', '10m')],
  },
  'down: never scraped at all': {
    input_series: [{ series: 'up{job="something-else"}', values: '1x20' }],
    alert_rule_test: [quiet('SignetDown', '3m'), firing('SignetDown', '10m')],
  },
  'healthy: up, ready, few denials, fast, no errors': {
    input_series: [
      series('up', 'pod="a"', '1x180'),
      series('signet_ready', 'pod="a"', '1x180'),
      series('signet_admission_requests_total', 'endpoint="validate", decision="denied", rule="policy"', '0+6x180'),
      series('signet_policies', 'state="invalid"', '0x180'),
      series('signet_verification_duration_seconds_bucket', 'le="0.1"', '0+60x180'),
      series('signet_verification_duration_seconds_bucket', 'le="+Inf"', '0+60x180'),
      series('signet_registry_errors_total', 'class="cancelled"', '0+600x180'),
      series('signet_kms_keys_stale', 'pod="a"', '0x180'),
      series('signet_trust_roots_stale', 'pod="a"', '0x180'),
      // Expires in 90 days; scans every hour, the last one just now; up for the whole run.
      series('signet_serving_certificate_expiry_timestamp_seconds', 'pod="a"', `${90 * DAY}x180`),
      series('signet_audit_last_scan_timestamp_seconds', 'pod="a"', '0+60x180'),
      series('signet_process_start_time_seconds', 'pod="a"', '0x180'),
    ],
    alert_rule_test: [
      'SignetDown',
      'SignetNotReady',
      'SignetDenialSpike',
      'SignetInfrastructureFailures',
      'SignetRegistryErrors',
      'SignetVerificationSlow',
      'SignetPolicyInvalid',
      'SignetKmsKeysStale',
      'SignetTrustRootsStale',
      'SignetServingCertificateExpiring',
      'SignetAuditScanStale',
    ].map((name) => quiet(name, '170m')),
  },
  'KMS keys served stale for an hour': {
    input_series: [series('signet_kms_keys_stale', 'pod="a"', '2x90')],
    alert_rule_test: [quiet('SignetKmsKeysStale', '50m'), firing('SignetKmsKeysStale', '70m')],
  },
  'KMS keys stale for a while, then fetched again': {
    input_series: [series('signet_kms_keys_stale', 'pod="a"', '1x40 0x50')],
    alert_rule_test: [quiet('SignetKmsKeysStale', '30m'), quiet('SignetKmsKeysStale', '80m')],
  },
  'trust roots served stale for six hours': {
    input_series: [series('signet_trust_roots_stale', 'pod="a"', '1x420')],
    alert_rule_test: [quiet('SignetTrustRootsStale', '5h'), firing('SignetTrustRootsStale', '6h30m')],
  },
  'the serving certificate expires within a week': {
    // Replica a renewed (expires in 60 days), replica b still presents one expiring in 3 days.
    input_series: [
      series('signet_serving_certificate_expiry_timestamp_seconds', 'pod="a"', `${60 * DAY}x30`),
      series('signet_serving_certificate_expiry_timestamp_seconds', 'pod="b"', `${3 * DAY}x30`),
    ],
    alert_rule_test: [quiet('SignetServingCertificateExpiring', '5m'), firing('SignetServingCertificateExpiring', '20m')],
  },
  'the serving certificate is renewed in time': {
    input_series: [series('signet_serving_certificate_expiry_timestamp_seconds', 'pod="a"', `${8 * DAY}x30`)],
    alert_rule_test: [quiet('SignetServingCertificateExpiring', '25m')],
  },
  'the background scan stopped completing': {
    // The last scan finished at minute 1; Signet has run since minute 0.
    input_series: [
      series('signet_audit_last_scan_timestamp_seconds', 'pod="a"', '60x300'),
      series('signet_audit_last_scan_timestamp_seconds', 'pod="b"', '0x300'),
      series('signet_process_start_time_seconds', 'pod="a"', '0x300'),
      series('signet_process_start_time_seconds', 'pod="b"', '0x300'),
    ],
    alert_rule_test: [quiet('SignetAuditScanStale', '2h'), firing('SignetAuditScanStale', '4h')],
  },
  'no scan yet, but the replicas started recently': {
    // A rollout at 3h: both replicas are new, the first scan has not finished yet.
    input_series: [
      series('signet_audit_last_scan_timestamp_seconds', 'pod="c"', '0x300'),
      series('signet_process_start_time_seconds', 'pod="c"', `${3 * 3600}x300`),
    ],
    alert_rule_test: [quiet('SignetAuditScanStale', '4h')],
  },
  'not ready': {
    input_series: [series('up', 'pod="a"', '1x30'), series('signet_ready', 'pod="a"', '0x30')],
    alert_rule_test: [quiet('SignetNotReady', '5m'), firing('SignetNotReady', '20m', { pod: 'a' })],
  },
  'denials: a spike over the hour before': {
    // 0.1 denials/s for two hours, then 1/s.
    input_series: [
      series(
        'signet_admission_requests_total',
        'endpoint="validate", decision="denied", rule="policy"',
        '0+6x120 720+60x40',
      ),
    ],
    alert_rule_test: [quiet('SignetDenialSpike', '110m'), firing('SignetDenialSpike', '140m')],
  },
  'denials: steady, however many': {
    input_series: [
      series('signet_admission_requests_total', 'endpoint="validate", decision="denied", rule="policy"', '0+60x180'),
    ],
    alert_rule_test: [quiet('SignetDenialSpike', '170m')],
  },
  'infrastructure failures and registry errors': {
    input_series: [
      series('signet_admission_requests_total', 'endpoint="validate", decision="denied", rule="infrastructure"', '0+3x40'),
      series('signet_registry_errors_total', 'class="timeout"', '0+30x40'),
    ],
    alert_rule_test: [
      firing('SignetInfrastructureFailures', '20m'),
      firing('SignetRegistryErrors', '30m', { class: 'timeout' }),
    ],
  },
  'verification slow at the 99th percentile': {
    input_series: [
      series('signet_verification_duration_seconds_bucket', 'le="1"', '0+10x40'),
      series('signet_verification_duration_seconds_bucket', 'le="5"', '0+10x40'),
      series('signet_verification_duration_seconds_bucket', 'le="10"', '0+60x40'),
      series('signet_verification_duration_seconds_bucket', 'le="+Inf"', '0+60x40'),
    ],
    alert_rule_test: [firing('SignetVerificationSlow', '30m')],
  },
  'an invalid policy': {
    input_series: [series('signet_policies', 'state="invalid", pod="a"', '1x30')],
    alert_rule_test: [quiet('SignetPolicyInvalid', '10m'), firing('SignetPolicyInvalid', '20m')],
  },
};

describe("the chart's alerts", () => {
  it('pass promtool check rules', async () => {
    const { stdout } = await promtoolRun(['check', 'rules', 'rules.yaml']);
    expect(stdout).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it.each(Object.entries(CASES))('promtool test rules: %s', async (name, test) => {
    const file = `test-${name.replace(/[^a-z]+/g, '-')}.yaml`;
    await writeFile(
      join(dir, file),
      stringify({ rule_files: ['bare-rules.yaml'], evaluation_interval: '1m', tests: [{ interval: '1m', ...test }] }),
    );
    const result = await promtoolRun(['test', 'rules', file]).catch((error: Error) => error);
    expect(result instanceof Error ? result.message : 'ok').toBe('ok');
  });

  it('every alert is tested firing', () => {
    const fired = new Set(
      Object.values(CASES).flatMap((c) =>
        (c.alert_rule_test as { alertname: string; exp_alerts: unknown[] }[])
          .filter((t) => t.exp_alerts.length > 0)
          .map((t) => t.alertname),
      ),
    );
    expect([...fired].sort()).toEqual(rules.map((r) => r.alert).sort());
  });
});

describe('the Grafana dashboard', () => {
  const text = readFileSync(join(CHART_DIR, 'files', 'dashboards', 'signet.json'), 'utf8');
  const dashboard = JSON.parse(text) as { panels: { title: string; targets?: { expr: string }[] }[] };
  const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

  it('is the same file in the chart and in docs/', () => {
    expect(readFileSync(new URL('../../../../docs/dashboards/signet.json', import.meta.url), 'utf8')).toBe(text);
  });

  it('has only queries that parse as PromQL (promtool check rules)', async () => {
    expect(exprs.length).toBeGreaterThan(15);
    const recording = exprs.map((e, i) => ({
      record: `dashboard:query_${i}`,
      expr: e.expr.replaceAll('$__rate_interval', '5m').replaceAll('$job', '.+'),
    }));
    await writeFile(join(dir, 'dashboard.yaml'), stringify({ groups: [{ name: 'dashboard', rules: recording }] }));
    const { stdout } = await promtoolRun(['check', 'rules', 'dashboard.yaml']);
    expect(stdout).toContain(`SUCCESS: ${recording.length} rules found`);
  });

  it('and the alerts name only metrics Signet exports', async () => {
    const metrics = new SignetMetrics({ build: { version: '0.0.0' } });
    new AuditMetrics(metrics.registry);
    const families = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name);
    const exported = new Set(
      families.flatMap((name) => [name, `${name}_bucket`, `${name}_sum`, `${name}_count`]).concat('up'),
    );
    const used = [...exprs.map((e) => e.expr), ...rules.map((r) => r.expr)].flatMap(
      (expr) => expr.match(/\b(signet_[a-z_]+|up)\b(?=\{|\[|\))/g) ?? [],
    );
    expect(used.length).toBeGreaterThan(20);
    expect([...new Set(used)].filter((name) => !exported.has(name))).toEqual([]);
  });
});
