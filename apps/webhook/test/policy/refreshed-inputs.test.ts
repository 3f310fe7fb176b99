// The KMS and TUF inputs of policy compiles as `signet serve` makes them: what an unreachable
// mirror and KMS do to the log and the metrics (the root and keys in use are named), and that a
// change recompiles. The fetching itself is tested in @signet/verifier and @signet/kms against
// real servers; here a closed loopback port stands for every unreachable service.
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { SignetMetrics } from '../../src/metrics.js';
import { createRefreshedInputs } from '../../src/policy/refreshed-inputs.js';
import { LogCapture } from '../helpers.js';

async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const value = async (metrics: SignetMetrics, name: string) =>
  (await metrics.registry.getSingleMetric(name)?.get())?.values.reduce((sum, v) => sum + v.value, 0);

describe('refreshed inputs of policy compiles', () => {
  it('start from the embedded root when the mirror is unreachable, and say so', async () => {
    const logs = new LogCapture();
    const metrics = new SignetMetrics({ defaultMetrics: false });
    const mirror = `http://127.0.0.1:${await closedPort()}`;
    const inputs = await createRefreshedInputs(
      { kmsRefreshMs: 10_000, tuf: { mirror, rootFile: undefined, cacheDir: undefined, refreshMs: 60_000 } },
      createLogger({ destination: logs }),
      metrics,
    );
    expect(inputs.defaultRoot?.source).toBe('fallback');
    expect(inputs.defaultRoot?.current?.name).toBe('public-good');
    expect(logs.lines.map((l) => l.msg)).toContain('trust root refresh failed: keeping the fallback root');
    expect(await value(metrics, 'signet_trust_roots_stale')).toBe(1);
    expect(await value(metrics, 'signet_trust_root_refreshes_total')).toBe(1);

    const lookup = await inputs.kmsKeys.lookup('hashivault://release');
    expect(lookup.kind).toBe('unavailable');
    expect(logs.lines.map((l) => l.msg)).toContain('KMS key refresh failed: no key yet');
    expect(await value(metrics, 'signet_kms_key_fetches_total')).toBe(1);
    const stop = inputs.start(() => undefined);
    stop();
  });

  it('use the embedded root and no mirror without --tuf-mirror', async () => {
    const inputs = await createRefreshedInputs(
      {
        kmsRefreshMs: 10_000,
        tuf: { mirror: undefined, rootFile: undefined, cacheDir: undefined, refreshMs: 60_000 },
      },
      createLogger({ level: 'silent' }),
      new SignetMetrics({ defaultMetrics: false }),
    );
    expect(inputs.defaultRoot).toBeUndefined();
    expect(inputs.generation).toBe(0);
  });
});
