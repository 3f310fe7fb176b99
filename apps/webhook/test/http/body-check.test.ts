// The worker pool that checks large bodies (http/body-check.ts), with real worker threads: its
// verdicts, and its bounds (queue, deadline, idle stop, shutdown). The HTTP side of it is in
// test/attack/heavy-bodies.test.ts and test/http/admission-app.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { BodyCheckPool, type BodyCheckResult } from '../../src/http/body-check.js';
import { reviewFixture, threadPriorities } from '../helpers.js';

const pools: BodyCheckPool[] = [];
function pool(options: ConstructorParameters<typeof BodyCheckPool>[0]): BodyCheckPool {
  const made = new BodyCheckPool(options);
  pools.push(made);
  return made;
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

/** `text` as the chunks a TLS socket would deliver (16 KiB records, each its own buffer). */
function chunks(text: string): { chunks: Buffer[]; size: number } {
  const bytes = Buffer.from(text);
  const parts: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 16_384) parts.push(Buffer.from(bytes.subarray(at, at + 16_384)));
  return { chunks: parts, size: bytes.length };
}

async function check(p: BodyCheckPool, text: string): Promise<BodyCheckResult> {
  const body = chunks(text);
  const result = p.check(body.chunks, body.size);
  if (result === undefined) throw new Error('refused: queue full');
  return result;
}

/** A valid Pod CREATE review padded to about `bytes` with an annotation. */
function padded(bytes: number): string {
  const review = JSON.parse(reviewFixture('pod-create.json'));
  review.request.object.metadata.annotations = { padding: 'x'.repeat(bytes) };
  return JSON.stringify(review);
}

describe('BodyCheckPool', () => {
  it('hands a valid body back whole, refuses too many JSON values unparsed, and reports a malformed one with its uid', async () => {
    const p = pool({ maxContainers: 1000 });
    const valid = padded(400_000);
    const ok = await check(p, valid);
    expect(ok.verdict).toBe('ok');
    if (ok.verdict === 'ok') expect(Buffer.from(ok.bytes).toString('utf8')).toBe(valid);

    const many = `{"request":{"x":[${Array(2000).fill('{}').join(',')}]}}`;
    expect(await check(p, many)).toEqual({
      verdict: 'too-large',
      message: 'the AdmissionReview holds more than 1000 JSON objects and arrays',
    });

    const review = JSON.parse(valid);
    review.request.operation = 'PATCH';
    expect(await check(p, JSON.stringify(review))).toMatchObject({
      verdict: 'malformed',
      uid: review.request.uid,
      path: 'request.operation',
    });
    // Nesting deeper than the parser accepts is its refusal, not a count.
    const deep = `{"request":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    expect(await check(p, deep)).toMatchObject({
      verdict: 'malformed',
      problem: 'JSON nested deeper than 102 levels',
    });
  });

  it('refuses more than its queue holds, and answers what waits when it closes', async () => {
    const p = pool({ workers: 1, maxQueued: 1 });
    const body = chunks(padded(300_000));
    const running = p.check(body.chunks, body.size);
    const waiting = p.check(chunks(padded(300_000)).chunks, body.size);
    expect(p.check(chunks(padded(300_000)).chunks, body.size)).toBeUndefined();
    await p.close();
    expect(await running).toMatchObject({ verdict: 'unavailable' });
    expect(await waiting).toEqual({ verdict: 'unavailable', message: 'the server is stopping' });
  });

  it('stops a worker past the deadline; the next body gets a fresh one', async () => {
    // Starting a worker alone takes longer than 1 ms.
    const hurried = pool({ timeoutMs: 1 });
    expect(await check(hurried, padded(300_000))).toEqual({
      verdict: 'unavailable',
      message: 'the request body could not be checked within 1 ms',
    });
    expect(hurried.workers).toBe(0);
  });

  it('starts workers on the first body and stops them when idle', async () => {
    const p = pool({ idleMs: 50 });
    expect(p.workers).toBe(0);
    expect((await check(p, padded(300_000))).verdict).toBe('ok');
    expect(p.workers).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(p.workers).toBe(0);
    expect((await check(p, padded(300_000))).verdict).toBe('ok');
  });

  it.runIf(process.platform === 'linux')(
    "runs its workers at the nice value asked for, and at the event loop's by default",
    async () => {
      const niceness = () =>
        threadPriorities()
          .all.filter((thread) => thread.name === 'body-check')
          .map((thread) => thread.nice);
      const { main } = threadPriorities();
      const lowered = pool({ threadNiceness: 10 });
      expect((await check(lowered, padded(300_000))).verdict).toBe('ok');
      expect(niceness()).toEqual([Math.min(19, main.nice + 10)]);
      expect(threadPriorities().main.nice).toBe(main.nice);
      await lowered.close();
      expect((await check(pool({}), padded(300_000))).verdict).toBe('ok');
      expect(niceness()).toEqual([main.nice]);
    },
  );
});
