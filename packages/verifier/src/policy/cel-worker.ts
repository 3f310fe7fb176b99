// The worker thread of `CelWorkers`: loads the CEL engine, says it is ready, then answers one
// request at a time, synchronously (the host bounds each with a deadline and terminates this
// thread when it passes). What it does is decided in cel.ts (`celRequestHandler`), which is
// tested on the main thread; this file only connects it to the port. It imports cel.ts by the
// extension it runs with, so that it runs from source (the tests) as from dist.
import { extname } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { CelAnswer, CelRequest } from './cel.js';

/** What the host starts a worker with. */
export interface CelWorkerStart {
  readonly costLimit: number;
  /** Programs kept between requests (zero: none, every request compiles). */
  readonly maxPrograms: number;
  readonly maxSourceBytes: number;
  /** Added to the thread's nice value before it loads the engine (@signet/policy-engines/thread-priority). */
  readonly threadNiceness: number;
}

/** Worker to host. */
export type CelWorkerMessage =
  | { readonly type: 'ready'; readonly startupMs: number }
  | { readonly type: 'answer'; readonly answer: CelAnswer };

const port = parentPort;
if (port === null) throw new Error('the CEL worker must run in a worker thread');
const started = performance.now();
// Imported by the extension this file runs with: .ts from source (tests), .js from dist.
const extension = extname(new URL(import.meta.url).pathname);
const start = workerData as CelWorkerStart;
const niceness = await import('@signet/policy-engines/thread-priority');
// Before the engine loads: that is the first costly work this thread does.
niceness.lowerThreadPriority(start.threadNiceness);
const cel = (await import(`./cel${extension}`)) as typeof import('./cel.js');
const handle = cel.celRequestHandler(
  new cel.CelProgramCache(
    { costLimit: start.costLimit },
    { maxEntries: start.maxPrograms, maxSourceBytes: start.maxSourceBytes },
  ),
);
const send = (message: CelWorkerMessage) => port.postMessage(message);
port.on('message', (message: CelRequest) => send({ type: 'answer', answer: handle(message) }));
send({ type: 'ready', startupMs: performance.now() - started });
