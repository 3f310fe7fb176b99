// One owner for the parts of a process, in the manner of controller-runtime's Manager: parts are
// started in the order given (each one's start awaited, so a part may rely on those before it) and
// stopped in reverse; leader-only parts are handed to the elector at their place in the order and
// taken back from it at theirs. A part that fails to start stops the ones already started.
import type { Logger } from '../logger.js';
import type { Part } from './part.js';

/** Runs the leader-only parts: starts each while this replica holds its Lease. */
export interface Elector {
  /** From now on, `part` runs whenever this replica holds its Lease (campaigning for it if needed). */
  serve(part: Part): void;
  /** `part` is stopped if it runs, and no longer served; a Lease no part needs is released. */
  withdraw(part: Part): Promise<void>;
}

export interface LifecycleOptions {
  readonly logger: Logger;
  /** Required when a part is leader-only (policies from a cluster); there is none without a cluster. */
  readonly elector?: Elector | undefined;
}

export class Lifecycle {
  readonly #parts: readonly Part[];
  readonly #logger: Logger;
  readonly #elector: Elector | undefined;
  readonly #started: Part[] = [];
  readonly #stopping = new AbortController();
  #stopped: Promise<void> | undefined;

  constructor(parts: readonly Part[], options: LifecycleOptions) {
    const orphan = parts.find((p) => p.leader !== undefined && options.elector === undefined);
    if (orphan !== undefined)
      throw new Error(`"${orphan.name}" runs on the leader only, and there is no leader election`);
    this.#parts = parts;
    this.#logger = options.logger;
    this.#elector = options.elector;
  }

  /** The parts' names in start order (the reverse of the stop order). */
  get names(): readonly string[] {
    return this.#parts.map((p) => p.name);
  }

  /** Starts every part in order; when one fails, stops those started (in reverse) and throws its error. */
  async start(): Promise<void> {
    for (const part of this.#parts) {
      try {
        if (part.leader !== undefined) this.#elector?.serve(part);
        else await part.start(this.#stopping.signal);
      } catch (error) {
        await this.stop(0);
        throw error;
      }
      this.#started.push(part);
    }
  }

  /**
   * Stops the started parts in reverse order (once, however often called). A part that fails to
   * stop is logged, and the others still stop.
   */
  stop(graceMs: number): Promise<void> {
    this.#stopped ??= this.#stopAll(graceMs);
    return this.#stopped;
  }

  async #stopAll(graceMs: number): Promise<void> {
    this.#stopping.abort(new Error('Signet is stopping'));
    for (const part of this.#started.toReversed()) {
      try {
        if (part.leader !== undefined) await this.#elector?.withdraw(part);
        else await part.stop(graceMs);
      } catch (error) {
        this.#logger.error({ err: error, part: part.name }, 'a part did not stop cleanly');
      }
    }
  }
}
