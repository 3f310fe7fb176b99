// Reading response bodies with a byte cap, as a stream: a 50 MB "manifest" costs the cap, not
// 50 MB, and an announced Content-Length over the cap is refused before a byte is read.

import { RegistryError, type RegistryErrorContext } from './errors.js';
import type { FetchResponse } from './net/request.js';

/** What to do when a body is longer than the cap. */
export type OverCap = 'fail' | 'truncate';

/**
 * The body of `response`, at most `maxBytes` long. With `'fail'` a longer body is a `TOO_LARGE`
 * error; with `'truncate'` (error bodies, only read for their message) it is cut. Either way the
 * rest of the stream is cancelled, which closes the connection instead of downloading it.
 */
export async function readBody(
  response: FetchResponse,
  maxBytes: number,
  overCap: OverCap,
  context: RegistryErrorContext,
): Promise<Uint8Array> {
  const announced = Number(response.headers.get('content-length') ?? Number.NaN);
  if (overCap === 'fail' && announced > maxBytes) {
    await response.body?.cancel().catch(ignore);
    throw tooLarge(context, `announces ${announced} bytes`, maxBytes);
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(ignore);
      if (overCap === 'fail') throw tooLarge(context, `is longer than ${maxBytes} bytes`, maxBytes);
      chunks.push(value.subarray(0, value.byteLength - (total - maxBytes)));
      total = maxBytes;
      break;
    }
    chunks.push(value);
  }
  return concat(chunks, total);
}

function tooLarge(context: RegistryErrorContext, what: string, maxBytes: number): RegistryError {
  return new RegistryError('TOO_LARGE', context, `the response body ${what}; the limit is ${maxBytes}`);
}

function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** Cancelling a stream that already failed rejects; the failure that matters is ours. */
function ignore(): void {}
