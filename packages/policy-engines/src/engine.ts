// One language's engine: a WebAssembly module run in a worker thread, started on first use.
// Requests run one at a time, each under a deadline; a request that overruns it (a policy that
// loops) terminates the worker, and one that exhausts the bounded memory (a policy that
// allocates without bound) stops the instance: the request fails with a PolicyEngineError and
// the next request starts a fresh worker, which compiles the live policies again on demand. A
// compile may carry its caller's signal: when it aborts, the request is dropped if it still
// waits, or its worker is terminated if it runs.
import { readFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { PolicyEngineError, PolicySourceError } from './errors.js';
import type { PolicyLanguage } from './languages.js';
import type { EngineAnswer, EngineOperation, WorkerMessage, WorkerStart } from './protocol.js';
import { withMemoryLimit } from './wasm-limits.js';

export interface EngineLimits {
  /** Deadline of one evaluation. */
  readonly evaluationTimeoutMs: number;
  /** Deadline of one compilation. */
  readonly compileTimeoutMs: number;
  /** Deadline for a worker to instantiate the engine. */
  readonly startupTimeoutMs: number;
  /** The engine's linear memory may grow to this. */
  readonly memoryLimitBytes: number;
  /** Requests waiting for the engine, beyond which new ones fail at once. */
  readonly maxQueued: number;
}

export const DEFAULT_LIMITS: EngineLimits = Object.freeze({
  evaluationTimeoutMs: 2_000,
  compileTimeoutMs: 10_000,
  startupTimeoutMs: 30_000,
  memoryLimitBytes: 256 * 1024 * 1024,
  maxQueued: 1_000,
});

/** What happened inside an engine, for logs and metrics. */
export type EngineEvent =
  | { readonly type: 'started'; readonly language: PolicyLanguage; readonly startupMs: number }
  | { readonly type: 'stopped'; readonly language: PolicyLanguage; readonly reason: string };

export interface EngineOptions {
  readonly language: PolicyLanguage;
  readonly wasmPath: string;
  readonly limits: EngineLimits;
  readonly onEvent?: ((event: EngineEvent) => void) | undefined;
}

interface RunningWorker {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  /** Policy ids compiled in this worker. */
  readonly compiled: Set<number>;
  seq: number;
}

export class LanguageEngine {
  readonly language: PolicyLanguage;
  readonly #options: EngineOptions;
  #module: Promise<WebAssembly.Module> | undefined;
  #running: RunningWorker | undefined;
  readonly #sources = new Map<number, string>();
  #nextId = 1;
  #tail: Promise<unknown> = Promise.resolve();
  #queued = 0;
  #closed = false;

  constructor(options: EngineOptions) {
    this.language = options.language;
    this.#options = options;
  }

  /** Policies compiled and not released (their sources are kept to compile them again). */
  get programs(): number {
    return this.#sources.size;
  }

  /**
   * Compiles `source`; returns its id. Throws {@link PolicySourceError} when it does not compile,
   * a PolicyEngineError (`ENGINE_CANCELLED`) as soon as `signal` aborts.
   */
  async compile(source: string, signal?: AbortSignal): Promise<number> {
    const id = this.#nextId++;
    let answer: EngineAnswer;
    try {
      answer = await this.#enqueue(
        { op: 'compile', id, source },
        this.#options.limits.compileTimeoutMs,
        signal,
      );
    } catch (error) {
      // Abandoned or failed: whatever the worker compiled for it is dropped once its turn is over.
      void this.#tail.then(() => this.#forget(id));
      throw error;
    }
    if (!answer.ok) throw new PolicySourceError(answer.error ?? 'the policy does not compile');
    this.#sources.set(id, source);
    return id;
  }

  /** Evaluates the policy `id` over the JSON text `input`. */
  evaluate(id: number, input: string): Promise<EngineAnswer> {
    return this.#enqueue({ op: 'eval', id, input }, this.#options.limits.evaluationTimeoutMs);
  }

  /** Forgets the policy `id` (a new revision replaced it). */
  release(id: number): void {
    if (this.#sources.delete(id)) this.#forget(id);
  }

  /** Drops `id` from the running worker, if it compiled it. */
  #forget(id: number): void {
    const running = this.#running;
    if (running?.compiled.delete(id)) {
      this.#enqueue({ op: 'drop', id }, this.#options.limits.compileTimeoutMs).catch(() => {});
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const running = this.#running;
    this.#running = undefined;
    await running?.worker.terminate();
  }

  #enqueue(operation: EngineOperation, timeoutMs: number, signal?: AbortSignal): Promise<EngineAnswer> {
    if (this.#closed)
      return Promise.reject(new PolicyEngineError('ENGINE_CLOSED', 'the policy engines are closed'));
    if (signal?.aborted) return Promise.reject(cancelled(this.language, signal));
    if (this.#queued >= this.#options.limits.maxQueued) {
      return Promise.reject(
        new PolicyEngineError(
          'ENGINE_BUSY',
          `the ${this.language} engine has ${this.#queued} requests waiting`,
        ),
      );
    }
    this.#queued += 1;
    const run = this.#tail.then(() => this.#run(operation, timeoutMs, signal));
    const settled = run.finally(() => {
      this.#queued -= 1;
    });
    this.#tail = settled.catch(() => {});
    if (signal === undefined) return settled;
    // The caller is answered as soon as it gives up; a request still waiting is skipped when its
    // turn comes, one running is stopped in #send.
    return new Promise<EngineAnswer>((resolve, reject) => {
      const onAbort = () => reject(cancelled(this.language, signal));
      signal.addEventListener('abort', onAbort, { once: true });
      settled.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  async #run(operation: EngineOperation, timeoutMs: number, signal?: AbortSignal): Promise<EngineAnswer> {
    if (this.#closed) throw new PolicyEngineError('ENGINE_CLOSED', 'the policy engines are closed');
    if (signal?.aborted) throw cancelled(this.language, signal);
    const running = await this.#worker();
    if (operation.op === 'eval' && !running.compiled.has(operation.id)) {
      const source = this.#sources.get(operation.id);
      if (source === undefined) {
        return { ok: false, kind: 'input', error: `policy ${operation.id} was released` };
      }
      const compiled = await this.#send(running, { op: 'compile', id: operation.id, source }, timeoutMs);
      if (!compiled.ok) return compiled;
    }
    const answer = await this.#send(running, operation, timeoutMs, signal);
    if (operation.op === 'compile' && answer.ok) running.compiled.add(operation.id);
    return answer;
  }

  #loadModule(): Promise<WebAssembly.Module> {
    this.#module ??= (async () => {
      let bytes: Uint8Array;
      try {
        bytes = await readFile(this.#options.wasmPath);
      } catch (error) {
        throw new PolicyEngineError(
          'ENGINE_UNAVAILABLE',
          `the ${this.language} engine's WebAssembly file does not load (${this.#options.wasmPath}): build @signet/policy-engine-${this.language}`,
          { cause: error },
        );
      }
      return WebAssembly.compile(withMemoryLimit(bytes, this.#options.limits.memoryLimitBytes));
    })();
    // A failed load is retried by the next request (the file may appear).
    this.#module.catch(() => {
      this.#module = undefined;
    });
    return this.#module;
  }

  async #worker(): Promise<RunningWorker> {
    if (this.#running === undefined) {
      const module = await this.#loadModule();
      this.#running = this.#spawn(module);
    }
    const running = this.#running;
    await running.ready;
    return running;
  }

  #spawn(module: WebAssembly.Module): RunningWorker {
    const start: WorkerStart = { module };
    const script = new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url);
    // The engine's memory is bounded by the module (withMemoryLimit); the JS heap of the
    // thread holds only messages.
    const worker = new Worker(script, {
      workerData: start,
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 },
      stdout: false,
      stderr: false,
    });
    worker.unref();
    const limits = this.#options.limits;
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        this.#stop(worker, 'did not start in time');
        reject(
          new PolicyEngineError(
            'ENGINE_TIMEOUT',
            `the ${this.language} engine did not start within ${limits.startupTimeoutMs} ms`,
          ),
        );
      }, limits.startupTimeoutMs);
      const onMessage = (message: WorkerMessage) => {
        if (message.type === 'ready') {
          cleanup();
          this.#options.onEvent?.({ type: 'started', language: this.language, startupMs: message.startupMs });
          resolve();
        } else if (message.type === 'fatal') {
          cleanup();
          this.#stop(worker, message.message);
          reject(
            new PolicyEngineError(
              'ENGINE_UNAVAILABLE',
              `the ${this.language} engine did not start: ${message.message}`,
            ),
          );
        }
      };
      const onError = (error: Error) => {
        cleanup();
        this.#stop(worker, error.message);
        reject(
          new PolicyEngineError('ENGINE_UNAVAILABLE', `the ${this.language} engine did not start`, {
            cause: error,
          }),
        );
      };
      const cleanup = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
    });
    // Crashes are reported to the request that caused them; this only keeps them from throwing.
    worker.on('error', () => {});
    return { worker, ready, compiled: new Set(), seq: 0 };
  }

  #stop(worker: Worker, reason: string): void {
    if (this.#running?.worker === worker) this.#running = undefined;
    worker.terminate().catch(() => {});
    this.#options.onEvent?.({ type: 'stopped', language: this.language, reason });
  }

  #send(
    running: RunningWorker,
    operation: EngineOperation,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<EngineAnswer> {
    running.seq += 1;
    const seq = running.seq;
    const { worker } = running;
    return new Promise<EngineAnswer>((resolve, reject) => {
      const onAbort = () => {
        cleanup();
        this.#stop(worker, `${operation.op} abandoned by its caller`);
        reject(cancelled(this.language, signal as AbortSignal));
      };
      const timer = setTimeout(() => {
        cleanup();
        this.#stop(worker, `${operation.op} overran ${timeoutMs} ms`);
        reject(
          new PolicyEngineError(
            'ENGINE_TIMEOUT',
            `the ${this.language} policy did not finish within ${timeoutMs} ms and was stopped`,
          ),
        );
      }, timeoutMs);
      const onMessage = (message: WorkerMessage) => {
        if (message.type === 'answer' && message.seq === seq) {
          cleanup();
          resolve(message.answer);
        } else if (message.type === 'fatal') {
          cleanup();
          this.#stop(worker, message.message);
          reject(new PolicyEngineError('ENGINE_CRASHED', crashMessage(this.language, message.message)));
        }
      };
      const onExit = (code: number) => {
        cleanup();
        this.#stop(worker, `exited with code ${code}`);
        reject(
          new PolicyEngineError('ENGINE_CRASHED', `the ${this.language} engine stopped (exit code ${code})`),
        );
      };
      const cleanup = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
      };
      worker.on('message', onMessage);
      worker.on('exit', onExit);
      signal?.addEventListener('abort', onAbort, { once: true });
      worker.postMessage({ ...operation, seq });
    });
  }
}

function cancelled(language: PolicyLanguage, signal: AbortSignal): PolicyEngineError {
  return new PolicyEngineError('ENGINE_CANCELLED', `the ${language} request was abandoned by its caller`, {
    cause: signal.reason,
  });
}

function crashMessage(language: PolicyLanguage, detail: string): string {
  // Go's runtime exits (proc_exit) when memory.grow fails at the module's limit.
  const memory = /exit|out of memory|grow/i.test(detail);
  return memory
    ? `the ${language} policy exhausted the engine's memory and was stopped (${detail})`
    : `the ${language} engine crashed (${detail})`;
}
