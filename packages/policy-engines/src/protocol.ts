// Messages between an engine host (main thread) and its worker thread. Types only: the worker
// file imports nothing at run time but Node's modules, so it also runs from source.

/** What the worker is started with. */
export interface WorkerStart {
  /** The engine, compiled once by the host (a module is shared with the worker, not copied). */
  readonly module: WebAssembly.Module;
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
  | { readonly type: 'ready'; readonly startupMs: number }
  | { readonly type: 'answer'; readonly seq: number; readonly answer: EngineAnswer }
  /** The instance stopped (out of memory, a Go panic, a trap): the worker exits after this. */
  | { readonly type: 'fatal'; readonly seq: number | undefined; readonly message: string };
