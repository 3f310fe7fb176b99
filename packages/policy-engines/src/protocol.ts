// Messages between an engine host (main thread) and its worker thread. Types only: the worker
// file imports nothing at run time but Node's modules, so it also runs from source.

/** What the worker is started with. */
export interface WorkerStart {
  /**
   * The engine: compiled by an earlier worker of the same engine (a module is shared between
   * threads, not copied), or the bytes of its file, which this worker bounds and compiles.
   */
  readonly engine:
    | { readonly module: WebAssembly.Module }
    | { readonly bytes: Uint8Array; readonly memoryLimitBytes: number };
  /** Added to the thread's nice value before it starts the engine (see thread-niceness.ts). */
  readonly threadNiceness: number;
}

export type EngineOperation =
  | { readonly op: 'compile'; readonly id: number; readonly source: string }
  | { readonly op: 'eval'; readonly id: number; readonly input: string }
  | { readonly op: 'drop'; readonly id: number };

export type HostMessage = EngineOperation & { readonly seq: number };

/** An engine's answer (the Go side's abi.Response). */
export interface EngineAnswer {
  readonly ok: boolean;
  /** Which side failed: `compile` (the policy), `input` (the JSON), `policy` (not satisfied). */
  readonly kind?: 'compile' | 'input' | 'policy';
  readonly error?: string;
  readonly warning?: string;
}

export type WorkerMessage =
  /** `module` when this worker compiled the engine: the next workers start from it. */
  | { readonly type: 'ready'; readonly startupMs: number; readonly module?: WebAssembly.Module }
  | { readonly type: 'answer'; readonly seq: number; readonly answer: EngineAnswer }
  /** The instance stopped (out of memory, a Go panic, a trap): the worker exits after this. */
  | { readonly type: 'fatal'; readonly seq: number | undefined; readonly message: string };
