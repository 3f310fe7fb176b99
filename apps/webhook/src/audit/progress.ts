// Progress of a long audit, on stderr: objects judged of the total, images verified (registry
// work) and cache hits (none), at most one line every `intervalMs` and one at the end.
import type { Writable } from 'node:stream';
import type { SignetMetrics } from '../metrics.js';
import type { AuditProgress } from './auditor.js';

export interface VerificationCounts {
  /** Verifications that ran (cache misses). */
  readonly verified: number;
  /** Verifications answered from the cache or joined in flight. */
  readonly cacheHits: number;
}

/** The cache counters of `metrics`, as progress reads them. */
export async function verificationCounts(metrics: SignetMetrics): Promise<VerificationCounts> {
  const { values } = await metrics.cacheLookups.get();
  const count = (result: string) =>
    values.filter((v) => v.labels.result === result).reduce((sum, v) => sum + v.value, 0);
  return { verified: count('miss'), cacheHits: count('hit') + count('shared') };
}

export class ProgressLine {
  readonly #out: Writable;
  readonly #counts: () => Promise<VerificationCounts>;
  readonly #intervalMs: number;
  #last = 0;
  #latest: AuditProgress = { done: 0, total: 0 };

  constructor(out: Writable, counts: () => Promise<VerificationCounts>, intervalMs = 2000) {
    this.#out = out;
    this.#counts = counts;
    this.#intervalMs = intervalMs;
  }

  readonly update = (progress: AuditProgress): void => {
    this.#latest = progress;
    const now = Date.now();
    if (now - this.#last < this.#intervalMs) return;
    this.#last = now;
    void this.#print();
  };

  async finish(): Promise<void> {
    await this.#print();
  }

  async #print(): Promise<void> {
    const { done, total } = this.#latest;
    const { verified, cacheHits } = await this.#counts();
    this.#out.write(
      `audit: ${done}/${total} objects, ${verified} images verified, ${cacheHits} cache hits\n`,
    );
  }
}
