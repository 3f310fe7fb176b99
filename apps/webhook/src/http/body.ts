// Reading request bodies within bounds: a size limit per request, a budget of bytes being read
// across all requests, and a deadline for the whole body, so that neither huge nor stalled bodies
// can exhaust memory or hold connections. Signet's own, not express's body parsers: those have
// neither the shared budget nor a deadline (docs/adr/0017-http-through-express.md).
import type { IncomingMessage } from 'node:http';

export interface BodyLimits {
  /** Largest accepted body. */
  readonly maxBytes: number;
  /** How long the whole body may take to arrive, from the request's headers. */
  readonly timeoutMs: number;
}

/** Why a body was not read; `status` is the HTTP answer. */
export class BodyError extends Error {
  override readonly name = 'BodyError';
  constructor(
    readonly status: 408 | 413 | 503,
    message: string,
  ) {
    super(message);
  }

  /** `HTTP_<status>`: a refused body is an expected condition (logged without a stack). */
  get code(): string {
    return `HTTP_${this.status}`;
  }
}

/** Bytes of bodies being read right now, across all connections, against a fixed budget. */
export class ByteBudget {
  #used = 0;
  constructor(readonly limit: number) {}

  get used(): number {
    return this.#used;
  }

  /** Takes `bytes` if they fit; false (nothing taken) when they do not. */
  take(bytes: number): boolean {
    if (this.#used + bytes > this.limit) return false;
    this.#used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.#used = Math.max(0, this.#used - bytes);
  }
}

/** A body that was read, holding its share of the budget until `release()` (after it is parsed). */
export interface HeldBody {
  /** The chunks as they arrived (each TLS record's own buffer): a large body is handed to a worker thread as they are. */
  readonly chunks: readonly Buffer[];
  readonly size: number;
  /** The body in one buffer (joined on first use). */
  bytes(): Buffer;
  release(): void;
}

/**
 * Reads `req`'s body. A declared `Content-Length` over the limit, or more than the budget has
 * left, is refused before reading; a chunked body is counted as it arrives. The budget taken is
 * given back at once when the body is refused, and by `release()` once it was read: a body waiting
 * to be parsed still takes memory.
 */
export function readBody(req: IncomingMessage, limits: BodyLimits, budget: ByteBudget): Promise<HeldBody> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? Number.NaN);
    if (declared > limits.maxBytes) {
      reject(new BodyError(413, `request body is larger than ${limits.maxBytes} bytes`));
      return;
    }
    const known = Number.isInteger(declared) && declared >= 0;
    let taken = 0;
    const take = (bytes: number): boolean => {
      if (!budget.take(bytes)) return false;
      taken += bytes;
      return true;
    };
    if (known && !take(declared)) {
      reject(new BodyError(503, 'too many request bodies are being read; retry'));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (error: BodyError | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (error) {
        budget.give(taken);
        reject(error);
        return;
      }
      let released = false;
      let joined: Buffer | undefined;
      resolve({
        chunks,
        size,
        bytes: () => {
          joined ??= chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
          return joined;
        },
        release: () => {
          if (!released) budget.give(taken);
          released = true;
        },
      });
    };
    const timer = setTimeout(
      () => finish(new BodyError(408, `request body did not arrive within ${limits.timeoutMs} ms`)),
      limits.timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limits.maxBytes)
        return finish(new BodyError(413, `request body is larger than ${limits.maxBytes} bytes`));
      if (known && size > declared)
        return finish(new BodyError(413, 'request body is longer than its Content-Length'));
      if (!known && !take(chunk.length))
        return finish(new BodyError(503, 'too many request bodies are being read; retry'));
      chunks.push(chunk);
    };
    const onEnd = () => finish(undefined);
    const onError = () => finish(new BodyError(408, 'the request body was cut off'));
    const onAborted = onError;
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}
