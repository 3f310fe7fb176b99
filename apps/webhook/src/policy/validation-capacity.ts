// What `POST /validate-policy` may spend, apart from what admission needs. Anyone who can reach
// the admission port can send a policy to check, so the check runs in capacity of its own: its own
// CUE and Rego engines (their own workers and memory limit, loaded on the first CUE or Rego policy
// checked) and its own CEL worker, at most `concurrency` checks at a time and `maxWaiting` more
// waiting (beyond: busy, try again). A check is bounded by its review's deadline: when it passes,
// the check's engine compiles are dropped or their worker terminated, so that nothing keeps
// running for a caller who was answered. Nothing compiled is kept: every program a check compiled
// is released when it ends, and once no check has run for `idleMs` the engines and the CEL worker
// are stopped (an engine's WebAssembly memory never shrinks; a stopped one gives it all back). The
// admission engines never see a policy sent here.
import { type CelHost, CelWorkers, type EngineLanguage, type PolicyEngineHost } from '@signet/verifier';
import type { Logger } from '../logger.js';

type Engines = import('@signet/policy-engines').PolicyEngines;
type EnginePolicy = import('@signet/policy-engines').EnginePolicy;

/** What one check compiles with: engines and CEL bound to its deadline. */
export interface CheckTools {
  readonly engines: PolicyEngineHost;
  readonly cel: CelHost;
  /** Aborted when the review's deadline passes. */
  readonly signal: AbortSignal;
}

export type CheckOutcome<T> =
  | { readonly kind: 'checked'; readonly value: T }
  /** `concurrency` checks run and `maxWaiting` wait: refused at once. */
  | { readonly kind: 'busy' }
  /** The deadline passed, waiting or compiling: the check was abandoned. */
  | { readonly kind: 'late' };

export interface ValidationCapacityOptions {
  readonly logger: Logger;
  /** Checks at a time (`--policy-validation-concurrency`). */
  readonly concurrency: number;
  /** Checks waiting for one of those, beyond which a check is refused as busy. */
  readonly maxWaiting?: number;
  /** The validation engines' own memory limit (each engine's WebAssembly memory; default 128 MiB). */
  readonly memoryLimitBytes?: number;
  /** After this long without a check, the engines and the CEL worker are stopped (default 30 s). */
  readonly idleMs?: number;
  /** Added to the engines' and the CEL worker's thread nice value (default 0: unchanged). */
  readonly threadNiceness?: number;
}

const DEFAULT_MAX_WAITING = 8;

function ignore(): void {}
// Half the admission engines' 256 MiB: what a caller can make the validation engines grow to stays
// small next to what admission needs.
const DEFAULT_MEMORY_LIMIT = 128 * 1024 * 1024;
const DEFAULT_IDLE_MS = 30_000;

export class ValidationCapacity {
  readonly #options: ValidationCapacityOptions;
  #engines: Promise<Engines> | undefined;
  #cel: CelWorkers | undefined;
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  #compiled = 0;
  #idle: NodeJS.Timeout | undefined;

  constructor(options: ValidationCapacityOptions) {
    this.#options = options;
  }

  /** Programs the validation engines keep now: none once every check has ended. */
  async retained(): Promise<number> {
    if (this.#engines === undefined) return 0;
    const programs = (await this.#engines).programs();
    return programs.cue + programs.rego;
  }

  /** Whether the validation engines or CEL worker run (started by a check, stopped when idle). */
  get loaded(): boolean {
    return this.#engines !== undefined || this.#cel !== undefined;
  }

  /** Engine programs compiled by checks so far (for tests: the checks did reach the engines). */
  get compiled(): number {
    return this.#compiled;
  }

  /** Runs `check` when a slot is free, within `deadline` (epoch milliseconds). */
  async run<T>(deadline: number, check: (tools: CheckTools) => Promise<T>): Promise<CheckOutcome<T>> {
    const limit = this.#options.maxWaiting ?? DEFAULT_MAX_WAITING;
    if (this.#running >= this.#options.concurrency && this.#waiting.length >= limit) return { kind: 'busy' };
    clearTimeout(this.#idle);
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new Error('the review deadline passed')),
      Math.max(0, deadline - Date.now()),
    );
    const late = new Promise<'late'>((resolve) =>
      controller.signal.addEventListener('abort', () => resolve('late'), { once: true }),
    );
    try {
      if (!(await this.#acquire(controller.signal))) return { kind: 'late' };
      const programs: Promise<EnginePolicy>[] = [];
      const work = check(this.#tools(controller.signal, programs));
      // The slot is free, and what was compiled released, when the check has ended: promptly
      // after its deadline, since everything it waits on then fails at once.
      const ended = work
        .then(ignore, ignore)
        .then(() => Promise.allSettled(programs))
        .then((settled) => {
          for (const result of settled) if (result.status === 'fulfilled') result.value.release();
          this.#release();
        });
      const outcome = await Promise.race([work, late]);
      if (outcome === 'late') return { kind: 'late' };
      await ended;
      return { kind: 'checked', value: outcome };
    } finally {
      clearTimeout(timer);
      controller.abort(new Error('answered'));
    }
  }

  async close(): Promise<void> {
    clearTimeout(this.#idle);
    await this.#stop();
  }

  /** Stops the engines and the CEL worker; the next check starts them again. */
  async #stop(): Promise<void> {
    const engines = this.#engines;
    const cel = this.#cel;
    this.#engines = undefined;
    this.#cel = undefined;
    await Promise.all([cel?.close(), engines?.then((loaded) => loaded.close(), ignore)]);
  }

  #tools(signal: AbortSignal, programs: Promise<EnginePolicy>[]): CheckTools {
    return {
      signal,
      engines: {
        compile: (language: EngineLanguage, source: string) => {
          const program = this.#load().then((engines) => engines.compile(language, source, { signal }));
          this.#compiled += 1;
          programs.push(program);
          return program;
        },
      },
      cel: { compile: (source: string) => this.#celWorkers().compile(source, signal) },
    };
  }

  /** Resolves to true when a slot is taken, to false when `signal` aborts first (it leaves the line). */
  #acquire(signal: AbortSignal): Promise<boolean> {
    if (this.#running < this.#options.concurrency) {
      this.#running += 1;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const take = () => {
        signal.removeEventListener('abort', leave);
        this.#running += 1;
        resolve(true);
      };
      const leave = () => {
        this.#waiting.splice(this.#waiting.indexOf(take), 1);
        resolve(false);
      };
      signal.addEventListener('abort', leave, { once: true });
      this.#waiting.push(take);
    });
  }

  #release(): void {
    this.#running -= 1;
    this.#waiting.shift()?.();
    if (this.#running > 0) return;
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => {
      if (this.#running === 0) void this.#stop();
    }, this.#options.idleMs ?? DEFAULT_IDLE_MS);
    this.#idle.unref();
  }

  #celWorkers(): CelWorkers {
    // One worker, keeping nothing it compiled; started on the first CEL policy checked.
    this.#cel ??= new CelWorkers({
      workers: 1,
      maxPrograms: 0,
      threadNiceness: this.#options.threadNiceness ?? 0,
      onEvent: (event) => this.#options.logger.info({ event }, 'policy validation: CEL worker'),
    });
    return this.#cel;
  }

  #load(): Promise<Engines> {
    const logger = this.#options.logger;
    this.#engines ??= import('@signet/policy-engines').then(({ createPolicyEngines }) =>
      createPolicyEngines({
        // The engines' own queue bound (1,000) applies: one policy may compile many programs, and
        // at most `concurrency` checks, each bounded by its object's size, add to it.
        limits: { memoryLimitBytes: this.#options.memoryLimitBytes ?? DEFAULT_MEMORY_LIMIT },
        threadNiceness: this.#options.threadNiceness ?? 0,
        onEvent: (event) =>
          event.type === 'started'
            ? logger.info(
                { language: event.language, startupMs: Math.round(event.startupMs) },
                'policy validation: engine started',
              )
            : logger.info(
                { language: event.language, reason: event.reason },
                'policy validation: engine stopped',
              ),
      }),
    );
    return this.#engines;
  }
}
