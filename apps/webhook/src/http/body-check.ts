// Large request bodies are checked in worker threads (body-check-worker.ts), so that no body can
// hold the event loop that answers the cheap decisions. The pool is bounded (workers, queue, a
// deadline per body), started on the first large body and stopped when idle. A worker that
// overruns its deadline or its heap is terminated; the next body starts a fresh one.
//
// The worker answers with a verdict, not the parsed review: handing a parsed object back to the
// event loop (structured clone) costs more than parsing it there (987 ms against 365 ms for the
// 1.38-million-object body), so the event loop parses again what the worker found valid and
// bounded.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** What a worker is started with. */
export interface BodyCheckStart {
  /** Added to the thread's nice value before it takes a body (@signet/policy-engines/thread-priority). */
  readonly threadNiceness: number;
}

export interface BodyCheckRequest {
  readonly id: number;
  /** The body as it arrived, in chunks; the worker joins them. */
  readonly chunks: readonly Uint8Array[];
  readonly size: number;
  readonly maxContainers: number;
}

export type BodyCheckReply =
  | { readonly id: number; readonly verdict: 'ok'; readonly bytes: Uint8Array }
  | { readonly id: number; readonly verdict: 'too-large'; readonly message: string }
  | {
      readonly id: number;
      readonly verdict: 'malformed';
      readonly uid: string;
      /** Of the AdmissionReviewError the parse threw. */
      readonly path: string;
      readonly problem: string;
    };

/** What a check found: the body may be parsed (its bytes, handed back), or why not. */
export type BodyCheckResult =
  | { readonly verdict: 'ok'; readonly bytes: Uint8Array }
  | { readonly verdict: 'too-large'; readonly message: string }
  | { readonly verdict: 'malformed'; readonly uid: string; readonly path: string; readonly problem: string }
  /** The check could not run (deadline, worker crash, shutting down): try again. */
  | { readonly verdict: 'unavailable'; readonly message: string };

export interface BodyCheckOptions {
  /** Worker threads at most (default: the cores less one, between 1 and 2). */
  readonly workers?: number;
  /** Bodies waiting for a worker (default 32); beyond, `check` refuses. */
  readonly maxQueued?: number;
  /** From submission to verdict (default 5 s); a worker still busy then is terminated. */
  readonly timeoutMs?: number;
  /** Objects and arrays a body may hold (default 100,000). */
  readonly maxContainers?: number;
  /** An idle worker stops after this long (default 60 s), giving its memory back. */
  readonly idleMs?: number;
  /**
   * Added to each worker thread's nice value, so that the event loop (which answers the cheap
   * reviews) is scheduled before the workers when both want a core. Linux only, best effort;
   * default 0 (unchanged).
   */
  readonly threadNiceness?: number;
}

/**
 * JSON objects and arrays an AdmissionReview may hold. Parsing 100,000 of them on the event loop
 * takes about 6 ms (empty ones) to 45 ms (two-field ones, 3 MB) on the 2-core machine; an object
 * kept under etcd's 1.5 MiB holds far fewer in practice.
 */
export const DEFAULT_MAX_CONTAINERS = 100_000;

interface Task {
  readonly id: number;
  readonly chunks: readonly Uint8Array[];
  readonly size: number;
  readonly resolve: (result: BodyCheckResult) => void;
  readonly timer: NodeJS.Timeout;
  worker?: Slot;
}

interface Slot {
  readonly worker: Worker;
  task: Task | undefined;
  idle: NodeJS.Timeout | undefined;
}

const SCRIPT = new URL(
  import.meta.url.endsWith('.ts') ? './body-check-worker.ts' : './body-check-worker.js',
  import.meta.url,
);

export class BodyCheckPool {
  readonly #maxWorkers: number;
  readonly #maxQueued: number;
  readonly #timeoutMs: number;
  readonly #maxContainers: number;
  readonly #idleMs: number;
  readonly #threadNiceness: number;
  readonly #slots = new Set<Slot>();
  readonly #queue: Task[] = [];
  #nextId = 0;
  #closed = false;

  constructor(options: BodyCheckOptions = {}) {
    this.#maxWorkers = options.workers ?? Math.max(1, Math.min(2, availableParallelism() - 1));
    this.#maxQueued = options.maxQueued ?? 32;
    this.#timeoutMs = options.timeoutMs ?? 5000;
    this.#maxContainers = options.maxContainers ?? DEFAULT_MAX_CONTAINERS;
    this.#idleMs = options.idleMs ?? 60_000;
    this.#threadNiceness = options.threadNiceness ?? 0;
  }

  /** Worker threads running now. */
  get workers(): number {
    return this.#slots.size;
  }

  /**
   * Checks a body of `size` bytes in a worker; `undefined` when too many bodies are waiting
   * already. The chunks are handed over, not copied (each is empty afterwards); an `ok` verdict
   * hands the body back in one buffer. The event loop thus never copies a large body.
   */
  check(chunks: readonly Uint8Array[], size: number): Promise<BodyCheckResult> | undefined {
    if (this.#closed) return Promise.resolve({ verdict: 'unavailable', message: 'the server is stopping' });
    if (this.#queue.length >= this.#maxQueued) return undefined;
    return new Promise((resolve) => {
      const id = this.#nextId++;
      const task: Task = {
        id,
        chunks,
        size,
        resolve,
        timer: setTimeout(() => this.#overran(task), this.#timeoutMs),
      };
      this.#queue.push(task);
      this.#dispatch();
    });
  }

  /** Terminates the workers; bodies still waiting are answered `unavailable`. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const task of this.#queue.splice(0)) this.#settle(task, unavailable('the server is stopping'));
    await Promise.all(
      [...this.#slots].map((slot) => {
        if (slot.task) this.#settle(slot.task, unavailable('the server is stopping'));
        return this.#stop(slot);
      }),
    );
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const slot = this.#idleSlot() ?? this.#spawn();
      if (slot === undefined) return;
      const task = this.#queue.shift() as Task;
      clearTimeout(slot.idle);
      slot.task = task;
      task.worker = slot;
      // Handed over without a copy; a view of part of a buffer is copied out first.
      const chunks = task.chunks.map((chunk) =>
        chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength
          ? chunk
          : new Uint8Array(chunk),
      );
      const request: BodyCheckRequest = {
        id: task.id,
        chunks,
        size: task.size,
        maxContainers: this.#maxContainers,
      };
      slot.worker.postMessage(
        request,
        chunks.map((chunk) => chunk.buffer as ArrayBuffer),
      );
    }
  }

  #idleSlot(): Slot | undefined {
    for (const slot of this.#slots) if (slot.task === undefined) return slot;
    return undefined;
  }

  #spawn(): Slot | undefined {
    if (this.#slots.size >= this.#maxWorkers) return undefined;
    // The heap bounds what one body can cost; a body past the container bound is never parsed.
    const worker = new Worker(SCRIPT, {
      // The thread's name (as `ps -L` and /proc show it).
      name: 'body-check',
      workerData: { threadNiceness: this.#threadNiceness } satisfies BodyCheckStart,
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 },
      stdout: false,
      stderr: false,
    });
    worker.unref();
    const slot: Slot = { worker, task: undefined, idle: undefined };
    worker.on('message', (reply: BodyCheckReply) => {
      const task = slot.task;
      if (task === undefined || task.id !== reply.id) return;
      slot.task = undefined;
      this.#settle(task, reply);
      this.#rest(slot);
      this.#dispatch();
    });
    worker.on('error', (error: Error & { code?: string }) => {
      const task = slot.task;
      slot.task = undefined;
      if (task) {
        this.#settle(
          task,
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? { verdict: 'too-large', message: 'the AdmissionReview is too large to parse' }
            : unavailable(`the request body could not be checked: ${error.message}`),
        );
      }
    });
    worker.on('exit', () => {
      clearTimeout(slot.idle);
      this.#slots.delete(slot);
      const task = slot.task;
      if (task) this.#settle(task, unavailable('the request body could not be checked'));
      this.#dispatch();
    });
    this.#slots.add(slot);
    return slot;
  }

  /** An idle worker stops after a while: its heap is given back. */
  #rest(slot: Slot): void {
    clearTimeout(slot.idle);
    slot.idle = setTimeout(() => {
      if (slot.task === undefined) void this.#stop(slot);
    }, this.#idleMs);
    slot.idle.unref();
  }

  #overran(task: Task): void {
    const queued = this.#queue.indexOf(task);
    if (queued >= 0) this.#queue.splice(queued, 1);
    this.#settle(task, unavailable(`the request body could not be checked within ${this.#timeoutMs} ms`));
    const slot = task.worker;
    if (slot !== undefined && slot.task === task) {
      slot.task = undefined;
      void this.#stop(slot);
      this.#dispatch();
    }
  }

  #settle(task: Task, result: BodyCheckResult | BodyCheckReply): void {
    clearTimeout(task.timer);
    if (result.verdict === 'ok')
      task.resolve({ verdict: 'ok', bytes: (result as BodyCheckReply & { bytes: Uint8Array }).bytes });
    else if (result.verdict === 'malformed')
      task.resolve({ verdict: 'malformed', uid: result.uid, path: result.path, problem: result.problem });
    else task.resolve({ verdict: result.verdict, message: result.message });
  }

  async #stop(slot: Slot): Promise<void> {
    clearTimeout(slot.idle);
    this.#slots.delete(slot);
    await slot.worker.terminate();
  }
}

function unavailable(message: string): BodyCheckResult {
  return { verdict: 'unavailable', message };
}
