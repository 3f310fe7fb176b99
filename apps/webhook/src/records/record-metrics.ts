// The verification records' metrics, on Signet's registry. Every label has a closed set of values,
// except `policy`, bounded by Signet's policy label (the first 500 policies by name).
import { Counter, Gauge, type Registry } from 'prom-client';
import type { BoundedLabel } from '../metrics.js';

export class RecordMetrics {
  readonly records: Gauge<'state'>;
  readonly rejected: Counter<'reason'>;
  readonly lookups: Counter<'result'>;
  readonly writes: Counter<'result'>;
  readonly collected: Counter<'reason'>;
  readonly graceAdmissions: Counter<'policy'>;
  readonly graceRefusals: Counter<'refusal'>;
  readonly policyLabel: BoundedLabel;

  constructor(registry: Registry, policyLabel: BoundedLabel) {
    const registers = [registry];
    this.policyLabel = policyLabel;
    this.records = new Gauge({
      name: 'signet_verification_records',
      help: "VerificationRecord objects in Signet's namespace as this replica sees them: valid (written by Signet under its key) or rejected (anything else).",
      labelNames: ['state'],
      registers,
    });
    this.rejected = new Counter({
      name: 'signet_verification_records_rejected_total',
      help: 'VerificationRecord objects ignored, once per object version: hmac (not written by Signet under its key: forged, edited, copied) or unparseable.',
      labelNames: ['reason'],
      registers,
    });
    this.lookups = new Counter({
      name: 'signet_verification_record_lookups_total',
      help: 'Misses of the in-memory cache looked up in the records: hit (a pass another replica or an earlier process verified, the registry not asked), miss, stale (older than the cache TTL).',
      labelNames: ['result'],
      registers,
    });
    this.writes = new Counter({
      name: 'signet_verification_record_writes_total',
      help: 'Records written after a verification: created, updated, skipped (a newer one exists), conflict (another replica wrote it), full (at the record limit), failed, dropped (too many waiting).',
      labelNames: ['result'],
      registers,
    });
    this.collected = new Counter({
      name: 'signet_verification_records_collected_total',
      help: "Records deleted by the collector (the Lease holder): expired (older than the grace period and the cache TTL), over-limit (the oldest beyond the record limit), rejected (not Signet's).",
      labelNames: ['reason'],
      registers,
    });
    this.graceAdmissions = new Counter({
      name: 'signet_stale_if_error_admissions_total',
      help: 'Images admitted on a verification record because verification failed for an infrastructure reason (stale-if-error), by policy.',
      labelNames: ['policy'],
      registers,
    });
    this.graceRefusals = new Counter({
      name: 'signet_stale_if_error_refusals_total',
      help: 'Infrastructure failures no record could stand in for, by why: no-record, expired, other-fingerprint, tag, off, other-image, other-policy, future.',
      labelNames: ['refusal'],
      registers,
    });
  }
}
