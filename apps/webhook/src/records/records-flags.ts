// `signet serve`'s verification-record flags, described once (help, README tables) and validated here.
import type { FlagSpec, FlagValues } from '../cli/flags.js';
import type { RecordsServeConfig } from '../config.js';
import { UsageError } from '../errors.js';
import { parseGoDuration } from '../http/duration.js';
import { MAX_STALE_IF_ERROR_MS } from '../policy/stale-if-error-annotation.js';

/** The records key Secret's name by default: the chart's (`<release>-webhook-records-key`) for the release `signet`. */
export const RECORDS_KEY_SECRET = 'signet-webhook-records-key';

export const RECORDS_SERVE_FLAGS: readonly FlagSpec[] = [
  {
    name: 'verification-records',
    type: 'boolean',
    description:
      "keep a VerificationRecord per passed digest and policy in Signet's namespace: replicas and restarts share passes, and stale-if-error (cluster only)",
  },
  {
    name: 'stale-if-error',
    type: 'string',
    value: 'DURATION',
    default: '24h',
    description:
      'with --verification-records: a record this young admits a digest that cannot be verified now for an infrastructure reason, with a warning; 0 turns it off (a policy may set its own: annotation signet.dev/stale-if-error)',
  },
  {
    name: 'max-verification-records',
    type: 'string',
    value: 'N',
    default: '5000',
    description: 'records kept at most (100 to 9000); the oldest go first',
  },
  {
    name: 'verification-records-secret',
    type: 'string',
    value: 'NAME',
    default: 'signet-webhook-records-key',
    description: "the Secret in Signet's namespace holding the records' HMAC key (created when missing)",
  },
];

export function recordsServeConfigFrom(flags: FlagValues): RecordsServeConfig {
  const grace = flags['stale-if-error'] as string | undefined;
  const staleIfErrorMs = grace === '0' ? 0 : parseGoDuration(grace ?? '24h');
  if (staleIfErrorMs === undefined || staleIfErrorMs > MAX_STALE_IF_ERROR_MS)
    throw new UsageError(
      `--stale-if-error must be a duration like 24h, at most 720h, or 0, got ${JSON.stringify(grace)}`,
    );
  const max = (flags['max-verification-records'] as string | undefined) ?? '5000';
  const maxRecords = Number(max);
  if (!Number.isInteger(maxRecords) || maxRecords < 100 || maxRecords > 9_000)
    throw new UsageError(
      `--max-verification-records must be a whole number from 100 to 9000, got ${JSON.stringify(max)}`,
    );
  const keySecret = (flags['verification-records-secret'] as string | undefined) ?? RECORDS_KEY_SECRET;
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(keySecret))
    throw new UsageError(
      `--verification-records-secret must be a Kubernetes object name, got ${JSON.stringify(keySecret)}`,
    );
  return { enabled: flags['verification-records'] === true, staleIfErrorMs, maxRecords, keySecret };
}
