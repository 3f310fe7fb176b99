// Bodies read against a byte limit, as a stream: refused when announced too long, cut when they
// run past the limit (the rest is never read), and read whole otherwise.
import { describe, expect, it } from 'vitest';
import { BodyTooLargeError, cancelQuietly, readCappedBody } from '../../src/net/capped-body.js';
import type { FetchResponse } from '../../src/net/request.js';

/** A stream of `chunks` that records how many were pulled and whether it was cancelled. */
function counted(chunks: number, size: number, cancelRejects = false) {
  const state = { pulled: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled >= chunks) return controller.close();
      state.pulled += 1;
      controller.enqueue(new Uint8Array(size));
    },
    cancel() {
      state.cancelled = true;
      if (cancelRejects) throw new Error('already broken');
    },
  });
  return { body, state };
}

const response = (
  body: ReadableStream<Uint8Array> | null,
  headers: Record<string, string> = {},
): FetchResponse => ({
  status: 200,
  headers: new Headers(headers),
  body,
});

describe('readCappedBody', () => {
  it('reads a body within the limit whole', async () => {
    const { body } = counted(3, 10);
    expect((await readCappedBody(response(body), 30)).length).toBe(30);
    expect((await readCappedBody(response(null), 30)).length).toBe(0);
  });

  it('cuts an endless body as soon as it passes the limit', async () => {
    const { body, state } = counted(Number.POSITIVE_INFINITY, 1024);
    await expect(readCappedBody(response(body), 4096)).rejects.toThrow(new BodyTooLargeError(4096));
    expect(state.pulled).toBeLessThan(10);
    expect(state.cancelled).toBe(true);
  });

  it('refuses an announced length over the limit before reading, even if cancelling fails', async () => {
    const { body, state } = counted(5, 10, true);
    await expect(readCappedBody(response(body, { 'content-length': '50' }), 10)).rejects.toMatchObject({
      code: 'SIGNET_BODY_TOO_LARGE',
      limit: 10,
      message: 'larger than 10 bytes',
    });
    expect(state.pulled).toBeLessThanOrEqual(1);
    expect(state.cancelled).toBe(true);
    await cancelQuietly(null);
  });
});
