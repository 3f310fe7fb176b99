import { describe, expect, it } from 'vitest';
import { readBody } from '../src/body.js';
import { RegistryError } from '../src/errors.js';
import { HttpTransport } from '../src/http.js';
import { callWithin } from './helpers/server.js';

const context = { registry: 'r.example', repository: 'app' };

/** A body of `chunks` chunks of 10 bytes whose cancel fails, like a connection that just broke. */
function brittleBody(chunks: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent++ < chunks) controller.enqueue(new Uint8Array(10).fill(sent));
      else controller.close();
    },
    cancel() {
      throw new Error('connection reset');
    },
  });
}

describe('readBody', () => {
  it('joins chunks', async () => {
    const body = await readBody(new Response(brittleBody(3)), 100, 'fail', context);
    expect(body).toHaveLength(30);
    expect([...body.slice(9, 11)]).toEqual([1, 2]);
  });

  it('reports TOO_LARGE even when cancelling the rest fails', async () => {
    const error = await readBody(new Response(brittleBody(5)), 25, 'fail', context).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RegistryError);
    expect((error as RegistryError).code).toBe('TOO_LARGE');
  });

  it('truncates when asked to, even when cancelling the rest fails', async () => {
    const body = await readBody(new Response(brittleBody(5)), 25, 'truncate', context);
    expect(body).toHaveLength(25);
  });

  it('reads an empty body', async () => {
    expect(await readBody(new Response(null), 10, 'fail', context)).toHaveLength(0);
  });

  it('refuses an announced length over the cap even without a readable body', async () => {
    const response = new Response(null, { headers: { 'content-length': '100' } });
    const error = (await readBody(response, 10, 'fail', context).catch(
      (caught: unknown) => caught,
    )) as RegistryError;
    expect(error.code).toBe('TOO_LARGE');
  });
});

describe('HttpTransport with bodies that cannot be cancelled', () => {
  it('still follows a redirect and retries', async () => {
    const responses = [
      () => new Response(brittleBody(1), { status: 503 }),
      () => new Response(brittleBody(1), { status: 302, headers: { location: 'https://r.example/next' } }),
      () => new Response(brittleBody(1), { status: 200 }),
    ];
    const transport = new HttpTransport({
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 },
      fetch: async () => (responses.shift() as () => Response)(),
    });
    const response = await transport.send(
      { method: 'HEAD', url: new URL('https://r.example/start'), maxBytes: 10, context },
      callWithin(5_000),
    );
    expect(response.status).toBe(200);
    expect(response.url.href).toBe('https://r.example/next');
    expect(responses).toHaveLength(0);
  });
});
