// What the policy compiler needs of a place to run CEL. `CelWorkers` (worker threads, so that the
// event loop never waits on an expression) is the one a server uses; without one, the compiler
// evaluates on the calling thread under the same cost limit (a command-line run, tests).
import type { CelOutcome } from './cel.js';

export type { CelOutcome } from './cel.js';

/**
 * Comprehension steps (elements visited by all, exists, exists_one, map, filter) one evaluation
 * may take: two nested all() over 500 elements each, or one over a quarter of a million, about
 * a tenth of a second of a worker. Here, not in cel.ts, so that naming it loads no CEL engine.
 */
export const DEFAULT_CEL_COST_LIMIT = 250_000;

/** A CEL expression compiled in its host. */
export interface CelEvaluator {
  readonly source: string;
  /**
   * Evaluates the expression over `bindings`. Rejects when the host itself fails (deadline,
   * memory, crash, too many waiting, `signal` aborted): nothing was judged.
   */
  evaluate(bindings: Readonly<Record<string, unknown>>, signal?: AbortSignal): Promise<CelOutcome>;
}

export interface CelHost {
  /**
   * Parses and plans `source`. Rejects with an error named `CelSyntaxError` when it does not
   * parse, with any other error when the host failed; `signal` abandons the compile.
   */
  compile(source: string, signal?: AbortSignal): Promise<CelEvaluator>;
}
