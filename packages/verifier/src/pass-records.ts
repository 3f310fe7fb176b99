// A store of passes kept outside this process: in Signet, the verification records its replicas
// keep in the cluster. The verifier asks it when its own in-memory cache has no pass (a restarted
// or a second replica), and tells it each pass it verified against the registry, so that one
// verification per digest and policy serves the whole cluster for the cache's lifetime.
import type { DigestRef } from '@signet/registry';
import type { CompiledAuthorities } from './policy/compile.js';
import type { PolicyCheck } from './policy/verify-policy.js';

/** A pass found in the store, and how much longer it may be reused. */
export interface RecordedPass {
  readonly check: PolicyCheck;
  /** What is left of the cache's lifetime for it (the record's age taken off); above 0. */
  readonly freshForMs: number;
}

export interface PassRecords {
  /**
   * A pass of this policy at this revision for this image, recorded by any replica no longer
   * than the cache's lifetime ago; `undefined` when there is none. A memory read: it never waits.
   */
  find(policy: CompiledAuthorities, image: DigestRef): RecordedPass | undefined;
  /**
   * A pass this process verified against the registry (never one it took from the store). Must
   * return at once: writing it is the store's business, never the admission's.
   */
  passed(policy: CompiledAuthorities, image: DigestRef, check: PolicyCheck): void;
}
