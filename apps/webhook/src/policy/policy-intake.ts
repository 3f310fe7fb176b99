// Where each new view of the policy objects enters a running Signet (a policy file once, or every
// change the cluster's watches deliver): handed to the applier, and kept, so that a change of what
// the policies read from outside (a KMS key, a TUF-served root) compiles the same view again.
import type { PolicyObjects } from './policy-objects.js';

export interface PolicyIntakeOptions {
  /** Compiles and installs one view (see `policyApplier`). */
  readonly apply: (objects: PolicyObjects) => Promise<void>;
  /** Told every new view first (the remote TrustRoots of objects that are gone are dropped). */
  readonly onView?: (objects: PolicyObjects) => void;
  /** Told after each new view was applied (the background scan looks whether it must scan again). */
  readonly onApplied?: () => void;
}

export class PolicyIntake {
  readonly #options: PolicyIntakeOptions;
  #latest: PolicyObjects | undefined;

  constructor(options: PolicyIntakeOptions) {
    this.#options = options;
  }

  /** A new view of the policy objects: compiled and installed. */
  async accept(objects: PolicyObjects): Promise<void> {
    this.#latest = objects;
    this.#options.onView?.(objects);
    await this.#options.apply(objects);
    this.#options.onApplied?.();
  }

  /** What a view is compiled from outside changed: the last view is compiled again. */
  recompile(): void {
    if (this.#latest !== undefined) void this.#options.apply(this.#latest);
  }
}
