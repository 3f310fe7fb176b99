// `signet serve`'s background-scan flags, described once (help, README tables) and validated here.
import type { FlagSpec, FlagValues } from '../cli/flags.js';
import type { AuditServeConfig } from '../config.js';
import { UsageError } from '../errors.js';
import { parseGoDuration } from '../http/duration.js';

export const AUDIT_SERVE_FLAGS: readonly FlagSpec[] = [
  {
    name: 'audit-interval',
    type: 'string',
    value: 'DURATION',
    default: '1h',
    description:
      'background scan of what runs, every DURATION (up to 10% later, jittered) and when policies change; 0 disables it (cluster only)',
  },
  {
    name: 'audit-all-namespaces',
    type: 'boolean',
    description: 'scan every namespace Signet could intercept, not only opted-in ones (preflight reports)',
  },
  {
    name: 'audit-concurrency',
    type: 'string',
    value: 'N',
    default: '4',
    description: 'objects the scan judges at once (registry load; admission keeps priority)',
  },
  {
    name: 'audit-max-results',
    type: 'string',
    value: 'N',
    default: '500',
    description: 'results kept per PolicyReport (failures first; the summary counts all)',
  },
  {
    name: 'audit-lease',
    type: 'string',
    value: 'NAME',
    default: 'signet-audit',
    description: "the Lease in Signet's namespace that lets one replica scan at a time",
  },
];

function count(value: string | undefined, fallback: number, flag: string, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw new UsageError(`--${flag} must be a whole number from 1 to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

export function auditServeConfigFrom(flags: FlagValues): AuditServeConfig {
  const interval = flags['audit-interval'] as string | undefined;
  const intervalMs = interval === '0' ? 0 : parseGoDuration(interval ?? '1h');
  if (intervalMs === undefined)
    throw new UsageError(`--audit-interval must be a duration like 1h or 0, got ${JSON.stringify(interval)}`);
  if (intervalMs > 0 && intervalMs < 10_000)
    throw new UsageError(`--audit-interval must be at least 10s (or 0), got ${JSON.stringify(interval)}`);
  const lease = (flags['audit-lease'] as string | undefined) ?? 'signet-audit';
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(lease))
    throw new UsageError(`--audit-lease must be a Kubernetes object name, got ${JSON.stringify(lease)}`);
  return {
    intervalMs,
    allNamespaces: flags['audit-all-namespaces'] === true,
    concurrency: count(flags['audit-concurrency'] as string | undefined, 4, 'audit-concurrency', 64),
    maxResults: count(flags['audit-max-results'] as string | undefined, 500, 'audit-max-results', 5000),
    leaseName: lease,
  };
}
