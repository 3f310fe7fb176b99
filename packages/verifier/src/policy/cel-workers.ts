// CEL off the event loop: a small pool of worker threads, started on the first CEL policy (a
// cluster without one starts none and never loads the CEL engine). Each worker runs one request
// at a time under a deadline; one that overruns it, or whose caller gave up (`signal`), is
// terminated, so that nothing keeps running for a review that was answered, and a fresh worker
// takes the next request. Requests wait in a bounded queue; beyond it they fail at once. Every
// failure here is the host's (nothing was judged): callers treat it as an infrastructure
// failure. The cost limit inside the worker (cel.ts) is what stops a costly expression as a
// policy failure; the deadline is the backstop for what the limit does not count.
import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { CelAnswer, CelOutcome, CelRequest } from './cel.js';
import { type CelEvaluator, type CelHost, DEFAULT_CEL_COST_LIMIT } from './cel-host.js';
import type { CelWorkerMessage, CelWorkerStart } from './cel-worker.js';

export type CelWorkersErrorCode =
  /** The worker did not start (or not in time). */
  | 'CEL_UNAVAILABLE'
  /** The request did not finish within its deadline: the worker was stopped. */
  | 'CEL_TIMEOUT'
  /** The worker stopped (out of memory, a crash). */
  | 'CEL_CRASHED'
  /** Too many requests are waiting. */
  | 'CEL_BUSY'
  /** The caller's signal aborted (the review was answered): the request was dropped or stopped. */
  | 'CEL_CANCELLED'
  /** The pool was closed. */
  | 'CEL_CLOSED';

/** A failure of the CEL host, never of the policy. */
export class CelWorkersError extends Error {
  override readonly name = 'CelWorkersError';
  readonly code: CelWorkersErrorCode;
  constructor(code: CelWorkersErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

/** The expression does not parse: the policy's fault. */
export class CelSyntaxError extends Error {
  override readonly name = 'CelSyntaxError';
}

export type CelWorkersEvent =
  | { readonly type: 'started'; readonly startupMs: number }
  | { readonly type: 'stopped'; readonly reason: string };

export interface CelWorkersOptions {
  /** Worker threads at most (default: 2, or 1 on a single core). */
  readonly workers?: number;
  /**
   * Requests waiting for a worker, beyond which new ones fail at once (default 1,000: a snapshot
   * compiles every CEL policy of the cluster at once; an evaluation waiting for a review that was
   * answered leaves the queue).
   */
  readonly maxQueued?: number;
  /** Deadline of one evaluation (default 2 s, as CUE and Rego: the cost limit normally stops first). */
  readonly evaluationTimeoutMs?: number;
  /** Deadline of one compile (default 2 s). */
  readonly compileTimeoutMs?: number;
  /** Deadline for a worker to load the CEL engine (default 10 s). */
  readonly startupTimeoutMs?: number;
  /** Comprehension steps per evaluation (default {@link DEFAULT_CEL_COST_LIMIT}). */
  readonly costLimit?: number;
  /** Each worker's JavaScript heap (default 64 MiB): an evaluation that needs more stops it. */
  readonly memoryLimitMb?: number;
  /**
   * Compiled programs each worker keeps for the next evaluation (default 256, with at most 1 MiB
   * of source, so that what is kept stays a small part of the worker's heap). Zero for a pool that
   * only checks expressions and must keep nothing.
   */
  readonly maxPrograms?: number;
  /**
   * Added to each worker thread's nice value, so that the thread that uses the pool (an event
   * loop that has cheaper work to answer) is scheduled before the workers when both want a core.
   * Linux only, best effort; default 0 (unchanged).
   */
  readonly threadNiceness?: number;
  readonly onEvent?: (event: CelWorkersEvent) => void;
}

interface Job {
  readonly request: CelRequest;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (answer: CelAnswer) => void;
  readonly reject: (error: Error) => void;
  /** Removes the abort listener. */
  done(): void;
}

interface Slot {
  readonly worker: Worker;
  ready: boolean;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
}

const DEFAULTS = {
  maxQueued: 1_000,
  evaluationTimeoutMs: 2_000,
  compileTimeoutMs: 2_000,
  startupTimeoutMs: 10_000,
  memoryLimitMb: 64,
  maxPrograms: 256,
  threadNiceness: 0,
};
const MAX_SOURCE_BYTES = 1024 * 1024;

export class CelWorkers implements CelHost {
  readonly #options: Required<Omit<CelWorkersOptions, 'onEvent'>> & Pick<CelWorkersOptions, 'onEvent'>;
  readonly #slots = new Set<Slot>();
  readonly #queue: Job[] = [];
  #closed = false;

  constructor(options: CelWorkersOptions = {}) {
    this.#options = {
      ...DEFAULTS,
      workers: Math.min(2, availableParallelism()),
      costLimit: DEFAULT_CEL_COST_LIMIT,
      ...options,
    };
  }

  /** Worker threads running, requests waiting, for tests and metrics. */
  get stats(): { readonly workers: number; readonly queued: number } {
    return { workers: this.#slots.size, queued: this.#queue.length };
  }

  async compile(source: string, signal?: AbortSignal): Promise<CelEvaluator> {
    const answer = await this.#submit({ op: 'compile', source }, this.#options.compileTimeoutMs, signal);
    if (!answer.ok) throw new CelSyntaxError(answer.error);
    return Object.freeze({
      source,
      evaluate: (bindings: Readonly<Record<string, unknown>>, evaluationSignal?: AbortSignal) =>
        this.#evaluate(source, bindings, evaluationSignal),
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) this.#fail(job, 'CEL_CLOSED', 'the CEL workers are closed');
    await Promise.all(
      [...this.#slots].map((slot) => {
        if (slot.job) this.#fail(slot.job, 'CEL_CLOSED', 'the CEL workers are closed');
        return this.#stop(slot, 'closed');
      }),
    );
  }

  async #evaluate(
    source: string,
    bindings: Readonly<Record<string, unknown>>,
    signal: AbortSignal | undefined,
  ): Promise<CelOutcome> {
    const answer = await this.#submit(
      { op: 'eval', source, bindings },
      this.#options.evaluationTimeoutMs,
      signal,
    );
    // An evaluation is always answered with an outcome (see celRequestHandler).
    return (answer as { readonly outcome: CelOutcome }).outcome;
  }

  #submit(request: CelRequest, timeoutMs: number, signal: AbortSignal | undefined): Promise<CelAnswer> {
    if (this.#closed) return Promise.reject(new CelWorkersError('CEL_CLOSED', 'the CEL workers are closed'));
    if (signal?.aborted) return Promise.reject(cancelled(signal));
    if (this.#queue.length >= this.#options.maxQueued) {
      return Promise.reject(
        new CelWorkersError('CEL_BUSY', `${this.#queue.length} CEL evaluations are already waiting`),
      );
    }
    return new Promise<CelAnswer>((resolve, reject) => {
      const onAbort = () => this.#abandon(job);
      const job: Job = {
        request,
        timeoutMs,
        signal,
        resolve,
        reject,
        done: signal === undefined ? ignore : () => signal.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(job);
      this.#pump();
    });
  }

  /** The caller gave up: a waiting request is dropped, a running one stopped with its worker. */
  #abandon(job: Job): void {
    const queued = this.#queue.indexOf(job);
    if (queued >= 0) this.#queue.splice(queued, 1);
    for (const slot of this.#slots) {
      if (slot.job === job) void this.#stop(slot, 'its caller gave up');
    }
    job.done();
    job.reject(cancelled(job.signal as AbortSignal));
    this.#pump();
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      const idle = [...this.#slots].find((slot) => slot.ready && slot.job === undefined);
      if (idle === undefined) {
        if (this.#slots.size < this.#options.workers) this.#spawn();
        return;
      }
      this.#run(idle, this.#queue.shift() as Job);
    }
  }

  #run(slot: Slot, job: Job): void {
    slot.job = job;
    slot.timer = setTimeout(() => {
      void this.#stop(slot, `overran ${job.timeoutMs} ms`);
      this.#fail(
        job,
        'CEL_TIMEOUT',
        `the CEL ${job.request.op === 'eval' ? 'evaluation' : 'compile'} did not finish within ${job.timeoutMs} ms and was stopped`,
      );
      this.#pump();
    }, job.timeoutMs);
    try {
      slot.worker.postMessage(job.request);
    } catch (error) {
      // Bindings that cannot be copied to a thread (never the case for JSON): the input's fault.
      clearTimeout(slot.timer);
      slot.job = undefined;
      job.done();
      job.resolve({
        ok: true,
        outcome: { passed: false, reason: `CEL evaluation failed: ${(error as Error).message}` },
      });
    }
  }

  #spawn(): void {
    const start: CelWorkerStart = {
      costLimit: this.#options.costLimit,
      maxPrograms: this.#options.maxPrograms,
      maxSourceBytes: this.#options.maxPrograms === 0 ? 0 : MAX_SOURCE_BYTES,
      threadNiceness: this.#options.threadNiceness,
    };
    // cel-worker.ts from source (tests), cel-worker.js from dist.
    const script = new URL(`./cel-worker${extname(new URL(import.meta.url).pathname)}`, import.meta.url);
    const worker = new Worker(script, {
      // The thread's name (as `ps -L` and /proc show it).
      name: 'cel-worker',
      workerData: start,
      resourceLimits: { maxOldGenerationSizeMb: this.#options.memoryLimitMb, maxYoungGenerationSizeMb: 16 },
      stdout: false,
      stderr: false,
    });
    // The pool never keeps a process alive; a request in flight does, through its timer.
    worker.unref();
    const slot: Slot = { worker, ready: false, job: undefined, timer: undefined };
    this.#slots.add(slot);
    slot.timer = setTimeout(() => {
      void this.#stop(slot, 'did not start in time');
      this.#failWaiting(`the CEL engine did not start within ${this.#options.startupTimeoutMs} ms`);
      this.#pump();
    }, this.#options.startupTimeoutMs);
    worker.on('message', (message: CelWorkerMessage) => {
      if (message.type === 'ready') {
        clearTimeout(slot.timer);
        slot.ready = true;
        this.#options.onEvent?.({ type: 'started', startupMs: message.startupMs });
        this.#pump();
        return;
      }
      // One request at a time, and a stopped worker's listeners are gone: this answers `job`.
      const job = slot.job as Job;
      clearTimeout(slot.timer);
      slot.job = undefined;
      job.done();
      job.resolve(message.answer);
      this.#pump();
    });
    // A worker that ends without an error is stopped by its request's deadline (or the startup one).
    worker.on('error', (error: Error) => this.#crashed(slot, error));
  }

  /**
   * The worker died on its own (out of memory, an exception): its request fails, and the next
   * starts a new one. One that dies idle died starting (an idle worker runs nothing).
   */
  #crashed(slot: Slot, error: Error): void {
    const job = slot.job;
    void this.#stop(slot, error.message);
    if (job === undefined) this.#failWaiting(`the CEL engine did not start: ${error.message}`);
    else this.#fail(job, 'CEL_CRASHED', `the CEL worker stopped: ${error.message}`, error);
    this.#pump();
  }

  /** A worker that cannot start fails what waits, rather than starting another for each. */
  #failWaiting(message: string): void {
    for (const job of this.#queue.splice(0)) this.#fail(job, 'CEL_UNAVAILABLE', message);
  }

  #fail(job: Job, code: CelWorkersErrorCode, message: string, cause?: Error): void {
    job.done();
    job.reject(new CelWorkersError(code, message, cause === undefined ? undefined : { cause }));
  }

  /** Stops a worker of the pool (each is stopped once: a stopped one is no longer listened to). */
  async #stop(slot: Slot, reason: string): Promise<void> {
    this.#slots.delete(slot);
    clearTimeout(slot.timer);
    slot.job = undefined;
    // What a stopped worker still says (its exit included) is no longer anyone's business.
    slot.worker.removeAllListeners().on('error', ignore);
    this.#options.onEvent?.({ type: 'stopped', reason });
    await slot.worker.terminate().catch(ignore);
  }
}

function ignore(): void {}

function cancelled(signal: AbortSignal): CelWorkersError {
  return new CelWorkersError('CEL_CANCELLED', 'the CEL evaluation was abandoned: its review was answered', {
    cause: signal.reason,
  });
}
