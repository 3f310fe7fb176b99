import type { AdmissionRecord } from './admission-log.js';

/**
 * What a scenario needs from a webhook: how to register it, and what it decided. The naive
 * fixture implements it today; Signet (as a host process or in a kind cluster) implements it next,
 * and the same scenario steps run against both.
 */
export interface WebhookUnderTest {
  /** For reports: `naive policy-controller`, `signet`. */
  readonly name: string;
  /** Its log, shown when a scenario fails. */
  readonly logFile: string;
  /** The webhook configuration objects to apply (already pointing at the running server). */
  configurations(): readonly object[];
  /** Every admission it answered so far, oldest first. */
  admissions(): Promise<readonly AdmissionRecord[]>;
}
