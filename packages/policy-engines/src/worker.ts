// The worker thread that runs one engine instance (a Go wasip1 reactor). Requests are handled
// one at a time, synchronously: the host bounds each with a deadline and terminates this thread
// when it passes. Imports only Node's modules, types, and its own modules by the extension it
// runs with, so it runs from source as from dist.
import { extname } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { HostMessage, WorkerMessage, WorkerStart } from './protocol.js';

interface EngineExports {
  readonly memory: WebAssembly.Memory;
  signet_alloc(size: number): number;
  signet_call(length: number): bigint;
}

const port = parentPort;
if (port === null) throw new Error('the policy engine worker must run in a worker thread');
const send = (message: WorkerMessage) => port.postMessage(message);
const extension = extname(new URL(import.meta.url).pathname);
const niceness = (await import(`./thread-niceness${extension}`)) as typeof import('./thread-niceness.js');
const limits = (await import(`./wasm-limits${extension}`)) as typeof import('./wasm-limits.js');
const { engine: given, threadNiceness } = workerData as WorkerStart;
// Before the engine starts: compiling and instantiating it is the first costly work this thread does.
niceness.lowerThreadPriority(threadNiceness);
const encoder = new TextEncoder();
const decoder = new TextDecoder();

// node:wasi warns that it is experimental, once per thread: this thread is the only user.
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = ((warning: string | Error, ...rest: never[]) => {
  if (!String(warning).includes('WASI')) emitWarning(warning, ...rest);
}) as typeof process.emitWarning;
const { WASI } = await import('node:wasi');

/** The engine's stdout and stderr (a Go panic, "out of memory"): the first few KiB, for the report. */
const OUTPUT_LIMIT = 4 * 1024;
let output = '';

/**
 * The engine's module: the one an earlier worker compiled, or compiled here from its file's bytes
 * (tens of megabytes: bounding and compiling them here keeps that work off the host's event loop).
 */
function compiled(): { module: WebAssembly.Module; fresh: boolean } {
  if ('module' in given) return { module: given.module, fresh: false };
  return {
    module: new WebAssembly.Module(limits.withMemoryLimit(given.bytes, given.memoryLimitBytes)),
    fresh: true,
  };
}

function start(module: WebAssembly.Module): EngineExports {
  // No arguments, no environment, no preopened directories: the engine sees nothing of the host.
  const wasi = new WASI({ version: 'preview1', args: [], env: {}, returnOnExit: true });
  const imports = wasi.getImportObject() as WebAssembly.Imports;
  const preview1 = imports.wasi_snapshot_preview1 as Record<string, unknown>;
  const fdWrite = preview1.fd_write as (fd: number, iovs: number, count: number, written: number) => number;
  let exports: EngineExports | undefined;
  // Writes to stdout/stderr are kept (bounded), not printed: a crash's trace is long and the
  // caller reports the crash itself.
  preview1.fd_write = (fd: number, iovs: number, count: number, written: number): number => {
    if ((fd !== 1 && fd !== 2) || exports === undefined) return fdWrite(fd, iovs, count, written);
    const view = new DataView(exports.memory.buffer);
    let total = 0;
    for (let i = 0; i < count; i++) {
      const pointer = view.getUint32(iovs + i * 8, true);
      const length = view.getUint32(iovs + i * 8 + 4, true);
      if (output.length < OUTPUT_LIMIT) {
        output += decoder.decode(
          new Uint8Array(exports.memory.buffer, pointer, Math.min(length, OUTPUT_LIMIT)),
        );
      }
      total += length;
    }
    view.setUint32(written, total, true);
    return 0;
  };
  const instance = new WebAssembly.Instance(module, imports);
  exports = instance.exports as unknown as EngineExports;
  wasi.initialize(instance);
  return exports;
}

/** The first lines Go wrote before stopping ("fatal error: out of memory", "panic: ..."). */
function lastWords(): string {
  const lines = output.split('\n').filter((line) => /^(fatal error|panic|runtime: )/.test(line));
  return lines.slice(0, 3).join('; ');
}

function call(engine: EngineExports, message: HostMessage): string {
  const request =
    message.op === 'eval'
      ? `{"op":"eval","id":${message.id},"input":${message.input}}`
      : JSON.stringify({
          op: message.op,
          id: message.id,
          ...(message.op === 'compile' ? { source: message.source } : {}),
        });
  const bytes = encoder.encode(request);
  const pointer = engine.signet_alloc(bytes.length) >>> 0;
  new Uint8Array(engine.memory.buffer, pointer, bytes.length).set(bytes);
  const result = engine.signet_call(bytes.length);
  const at = Number(result >> 32n);
  const length = Number(result & 0xffff_ffffn);
  return decoder.decode(new Uint8Array(engine.memory.buffer, at, length));
}

const started = performance.now();
let engine: EngineExports;
try {
  const { module, fresh } = compiled();
  engine = start(module);
  send({ type: 'ready', startupMs: performance.now() - started, ...(fresh ? { module } : {}) });
} catch (error) {
  send({ type: 'fatal', seq: undefined, message: `the engine did not start: ${String(error)}` });
  process.exit(1);
}

port.on('message', (message: HostMessage) => {
  try {
    send({ type: 'answer', seq: message.seq, answer: JSON.parse(call(engine, message)) });
  } catch (error) {
    // A trap or an exit of the Go runtime (out of memory, a panic): the instance is unusable.
    const words = lastWords();
    send({
      type: 'fatal',
      seq: message.seq,
      message: words === '' ? String(error) : `${words} (${String(error)})`,
    });
    process.exit(1);
  }
});
