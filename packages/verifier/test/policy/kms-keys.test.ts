// The KMS key store with an injected fetcher and clock: when keys are fetched (compile time and
// the refresh schedule, never per admission), what an outage does (last good key kept, reported),
// bounds and deadlines; and how compiled KMS authorities verify. The cloud SDKs and real KMS
// servers are tested in @signet/kms.
import { beforeAll, describe, expect, it } from 'vitest';
import { compileAuthorities } from '../../src/policy/compile.js';
import { type KmsKeyEvent, type KmsKeyFetcher, KmsKeyStore } from '../../src/policy/kms-keys.js';
import { trustRootResolver } from '../../src/trust/compile.js';
import { ecKeyPair, type Infra, makeInfra, publicPem } from '../support/fixtures.js';
import { clusterImagePolicy } from '../support/policies.js';

const URI = 'hashivault://release';

function counting(answers: (() => Promise<{ pem: string; hashAlgorithm?: string }>)[]) {
  const calls: string[] = [];
  const fetcher: KmsKeyFetcher = (uri) => {
    calls.push(uri);
    const next = answers[Math.min(calls.length, answers.length) - 1];
    if (next === undefined) throw new Error('no answer');
    return next();
  };
  return { calls, fetcher };
}

function manualClock(start = Date.parse('2026-01-01T00:00:00Z')) {
  let now = start;
  return { now: () => new Date(now), advance: (ms: number) => (now += ms) };
}

describe('KmsKeyStore', () => {
  const first = publicPem(ecKeyPair());
  const second = publicPem(ecKeyPair());

  it('fetches once per refresh interval, and reports fetches and key changes', async () => {
    const { calls, fetcher } = counting([async () => ({ pem: first }), async () => ({ pem: second })]);
    const clock = manualClock();
    const events: KmsKeyEvent[] = [];
    const store = new KmsKeyStore({
      fetcher,
      clock: clock.now,
      refreshIntervalMs: 60_000,
      onEvent: (e) => events.push(e),
    });
    expect(store.refreshIntervalMs).toBe(60_000);
    const got = await store.lookup(URI);
    expect(got.kind === 'ready' && got.key.pem).toBe(first);
    await store.lookup(URI);
    expect(await store.refresh()).toBe(false);
    expect(calls).toHaveLength(1);
    clock.advance(60_000);
    expect(await store.refresh()).toBe(true);
    expect(calls).toHaveLength(2);
    expect(events.map((e) => e.kind === 'fetched' && e.changed)).toEqual([false, true]);
    expect(store.uris()).toEqual([URI]);
  });

  it('keeps the last good key when a refresh fails, says so, and clears that once the KMS answers', async () => {
    const { fetcher } = counting([
      async () => ({ pem: first }),
      async () => {
        throw new Error('connection refused');
      },
      async () => ({ pem: first }),
    ]);
    const events: KmsKeyEvent[] = [];
    const store = new KmsKeyStore({ fetcher, onEvent: (e) => events.push(e) });
    await store.lookup(URI);
    expect(await store.refresh({ force: true })).toBe(false);
    const failed = events[1];
    expect(failed?.kind).toBe('failed');
    if (failed?.kind !== 'failed') throw new Error('unreachable');
    expect(failed.lastGoodAt).toBeInstanceOf(Date);
    expect(failed.error.message).toBe(`KMS key ${URI}: cannot fetch the public key: connection refused`);
    const stale = await store.lookup(URI);
    expect(stale.kind === 'ready' && stale.stale?.message).toContain('connection refused');
    await store.refresh({ force: true });
    const fresh = await store.lookup(URI);
    expect(fresh.kind === 'ready' && fresh.stale).toBeUndefined();
  });

  it('is unavailable, with the reason, when no fetch ever succeeded', async () => {
    const store = new KmsKeyStore({
      fetcher: async () => {
        throw 'not an Error';
      },
    });
    const got = await store.lookup(URI);
    expect(got.kind).toBe('unavailable');
    expect(got.kind === 'unavailable' && got.error.message).toBe(
      `KMS key ${URI}: cannot fetch the public key: not an Error`,
    );
    const empty = new KmsKeyStore({ fetcher: async () => ({ pem: '' }) });
    const none = await empty.lookup(URI);
    expect(none.kind === 'unavailable' && none.error.message).toContain('the KMS returned no public key');
  });

  it('ends a fetch that ignores its deadline, and shares one fetch between concurrent lookups', async () => {
    let calls = 0;
    const store = new KmsKeyStore({
      fetcher: () => {
        calls += 1;
        return new Promise(() => undefined);
      },
      timeoutMs: 50,
    });
    const [a, b] = await Promise.all([store.lookup(URI), store.lookup(URI)]);
    expect(calls).toBe(1);
    expect(a.kind === 'unavailable' && a.error.message).toContain('no answer within 50 ms');
    expect(b.kind).toBe('unavailable');
  });

  it('is bounded (least recently used out) and forgets keys no policy names', async () => {
    const store = new KmsKeyStore({ fetcher: async () => ({ pem: first }), maxKeys: 2 });
    await store.lookup('hashivault://a');
    await store.lookup('hashivault://b');
    await store.lookup('hashivault://a');
    await store.lookup('hashivault://c');
    expect(store.uris()).toEqual(['hashivault://a', 'hashivault://c']);
    store.retain(['hashivault://c']);
    expect(store.uris()).toEqual(['hashivault://c']);
  });

  it('refuses a lookup of a URI the store was never asked about until it is fetched', async () => {
    const store = new KmsKeyStore({ fetcher: async () => ({ pem: first }), refreshIntervalMs: 1e12 });
    // A clock before the epoch-based "never attempted" marker cannot make a key look fresh.
    const early = new KmsKeyStore({
      fetcher: async () => ({ pem: first }),
      clock: () => new Date(0),
      refreshIntervalMs: 1,
    });
    expect((await store.lookup(URI)).kind).toBe('ready');
    const got = await early.lookup(URI);
    expect(got.kind === 'unavailable' && got.error.message).toBe(`KMS key ${URI}: not fetched yet`);
  });
});

describe('compiled KMS authorities', () => {
  let infra: Infra;
  beforeAll(async () => {
    infra = await makeInfra();
  });

  const compile = (store: KmsKeyStore) =>
    compileAuthorities(clusterImagePolicy([{ name: 'kms', key: { kms: URI } }]), {
      trustRoots: trustRootResolver([], { publicGood: infra.trustRoot }),
      kmsKeys: store,
    });

  it('use the key the store holds, with the digest the KMS says', async () => {
    const pem = publicPem(ecKeyPair('P-384'));
    const compiled = await compile(
      new KmsKeyStore({ fetcher: async () => ({ pem, hashAlgorithm: 'sha384' }) }),
    );
    const [authority] = compiled.authorities;
    if (authority?.type !== 'key' || authority.state.kind !== 'ready') throw new Error('not ready');
    const signer = authority.state.check.signer;
    expect(signer.type === 'key' && signer.keys.map((k) => [k.name, k.hashAlgorithm])).toEqual([
      [URI, 'sha384'],
    ]);
  });

  it('use SHA-256 when neither the KMS nor the policy names a digest', async () => {
    const pem = publicPem(ecKeyPair());
    const compiled = await compile(new KmsKeyStore({ fetcher: async () => ({ pem }) }));
    const [authority] = compiled.authorities;
    if (authority?.type !== 'key' || authority.state.kind !== 'ready') throw new Error('not ready');
    const signer = authority.state.check.signer;
    expect(signer.type === 'key' && signer.keys[0]?.hashAlgorithm).toBeUndefined();
  });

  it('are unavailable (an infrastructure failure per admission) while the KMS never answered', async () => {
    const compiled = await compile(
      new KmsKeyStore({
        fetcher: async () => {
          throw new Error('no route to host');
        },
      }),
    );
    const [authority] = compiled.authorities;
    if (authority?.type !== 'key' || authority.state.kind !== 'unavailable')
      throw new Error('not unavailable');
    expect(authority.state.reason.code).toBe('KMS_UNAVAILABLE');
    expect(authority.state.reason.kind).toBe('infrastructure');
    expect(authority.state.reason.message).toContain('no route to host');
  });

  it("do not compile when the fetcher's check refuses the URI, and nothing is fetched", async () => {
    let fetched = 0;
    const refusing = (thrown: unknown): KmsKeyFetcher =>
      Object.assign(
        async () => {
          fetched += 1;
          return { pem: publicPem(ecKeyPair()) };
        },
        {
          check: () => {
            throw thrown;
          },
        },
      );
    const refusal = Object.assign(new Error('KMS endpoint 10.0.0.1 is not an AWS KMS endpoint'), {
      code: 'SIGNET_KMS_ENDPOINT_REFUSED',
    });
    const store = new KmsKeyStore({ fetcher: refusing(refusal) });
    await expect(compile(store)).rejects.toMatchObject({
      code: 'UNSUPPORTED_KMS',
      path: 'spec.authorities[0].key.kms',
      message: expect.stringContaining('KMS endpoint 10.0.0.1 is not an AWS KMS endpoint'),
      cause: refusal,
    });
    expect(await store.lookup(URI)).toEqual({ kind: 'refused', error: refusal });
    expect(store.uris()).toEqual([]);
    const odd = await new KmsKeyStore({ fetcher: refusing('not an error') }).lookup(URI);
    expect(odd.kind === 'refused' && odd.error.message).toBe(`KMS key ${URI}: not an error`);
    expect(fetched).toBe(0);
  });
});
