// A frozen TUF mirror as `signet serve` meets it (issue 21, finding 5): the mirror stops
// publishing and keeps serving a timestamp that has expired. The default root (--tuf-mirror with
// a private Sigstore's --tuf-root, so there is no embedded fallback) is refreshed when the
// metadata it was verified with expires, is then no longer trusted (the policies recompile and
// what needs it fails as unavailable), and the metrics say so. A real python-tuf repository
// (PyPI tuf 7.0.1, through @signet/testbed) served on loopback; its timestamp is made to expire
// a few seconds after the first refresh.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TufMirror, TufRepository } from '@signet/testbed';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { SignetMetrics } from '../../src/metrics.js';
import { createRefreshedInputs } from '../../src/policy/refreshed-inputs.js';
import { LogCapture } from '../helpers.js';

/** Sigstore's public-good trusted_root.json, as @sigstore/tuf (a dependency of the verifier) ships it. */
function aTrustedRoot(): Buffer {
  const require = createRequire(import.meta.resolve('@signet/verifier'));
  const seeds = require('@sigstore/tuf/seeds.json') as Record<string, { targets: Record<string, string> }>;
  const seed = Object.values(seeds)[0]?.targets['trusted_root.json'] ?? '';
  return Buffer.from(seed, 'base64');
}

const sample = async (metrics: SignetMetrics, name: string, labels: Record<string, string>) =>
  (await metrics.registry.getSingleMetric(name)?.get())?.values.find((v) =>
    Object.entries(labels).every(([key, value]) => v.labels[key] === value),
  )?.value;

describe('a frozen TUF mirror', () => {
  let dir = '';
  let mirror: TufMirror | undefined;

  afterAll(async () => {
    await mirror?.stop();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('stops trusting the root when its metadata expires, recompiles, and counts it', async () => {
    dir = await mkdtemp(join(tmpdir(), 'signet-frozen-mirror-'));
    const repository = await TufRepository.create(
      join(dir, 'repository'),
      { 'trusted_root.json': aTrustedRoot() },
      { onProgress: (line) => console.log(`testbed: ${line}`) },
    );
    await writeFile(join(dir, 'root.json'), await repository.initialRoot());
    // The metadata the first refresh verifies expires in 4 seconds.
    await repository.expireTimestamp(4);
    mirror = await new TufMirror(join(dir, 'repository')).start();
    const logs = new LogCapture();
    const metrics = new SignetMetrics({ defaultMetrics: false });
    const inputs = await createRefreshedInputs(
      {
        kmsRefreshMs: 60_000,
        tuf: { mirror: mirror.url, rootFile: join(dir, 'root.json'), cacheDir: undefined, refreshMs: 60_000 },
      },
      createLogger({ destination: logs }),
      metrics,
    );
    expect(inputs.defaultRoot?.source).toBe('mirror');
    expect(inputs.defaultRoot?.expiresAt?.getTime()).toBeLessThan(Date.now() + 5_000);
    // The mirror freezes: what it serves from now on has expired.
    await repository.expireTimestamp();
    let changes = 0;
    const stop = inputs.start(() => {
      changes += 1;
    });
    try {
      const deadline = Date.now() + 45_000;
      while (changes === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(changes).toBe(1);
      expect(inputs.generation).toBe(1);
      expect(inputs.defaultRoot?.current).toBeUndefined();
      expect(await sample(metrics, 'signet_trust_root_refreshes_total', { result: 'expired' })).toBe(1);
      expect(await sample(metrics, 'signet_trust_roots_stale', { using: 'none' })).toBe(1);
      expect(await sample(metrics, 'signet_trust_roots_stale', { using: 'last_good' })).toBe(0);
      expect(logs.lines.map((l) => l.msg)).toContain(
        'trust root refresh failed (the mirror serves expired metadata): no root to use',
      );
    } finally {
      stop();
    }
  }, 90_000);
});
