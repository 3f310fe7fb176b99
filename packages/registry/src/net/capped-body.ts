// A response body read as a stream against a byte limit: a server that streams without end (no
// Content-Length, or a false one) costs the limit, not the memory it would take to buffer it.
// An announced length over the limit is refused before a byte is read; the stream is cancelled
// as soon as the limit is passed, which closes the connection.
import type { FetchResponse } from './request.js';

export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
  readonly code = 'SIGNET_BODY_TOO_LARGE';
  readonly limit: number;

  constructor(limit: number) {
    super(`larger than ${limit} bytes`);
    this.limit = limit;
  }
}

/** The whole body of `response`, at most `maxBytes`; longer is a {@link BodyTooLargeError}. */
export async function readCappedBody(response: FetchResponse, maxBytes: number): Promise<Buffer> {
  const announced = Number(response.headers.get('content-length') ?? Number.NaN);
  if (announced > maxBytes) {
    await cancelQuietly(response.body);
    throw new BodyTooLargeError(maxBytes);
  }
  if (response.body === null) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(ignore);
      throw new BodyTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

/**
 * Cancels a body that will not be read (which closes the connection rather than downloading
 * it). Cancelling a stream that already failed rejects; the failure that matters is the caller's.
 */
export async function cancelQuietly(body: ReadableStream<Uint8Array> | null): Promise<void> {
  await body?.cancel().catch(ignore);
}

function ignore(): void {}
