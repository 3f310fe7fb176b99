// The README holds: its API table lists exactly what `src/index.ts` exports, and its examples are
// `helpers/readme-example.ts` and `.cjs` verbatim and print what the README says, the first
// against a real registry (distribution, no referrers API) and an image signed by the real cosign.
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { apiTableNames, exportedNames } from '../../../scripts/readme-api.ts';
import { ensureTestTools, loadTestbed, type Testbed } from './helpers/testbed.js';

const SETUP_TIMEOUT = 30 * 60_000;
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

it('the API table lists every export of src/index.ts, once', () => {
  const listed = apiTableNames(readme);
  expect([...listed].sort()).toEqual(
    exportedNames(readFileSync(new URL('../src/index.ts', import.meta.url), 'utf8')),
  );
});

const exampleOf = (file: string) => {
  const source = readFileSync(new URL(`./helpers/${file}`, import.meta.url), 'utf8');
  return source
    .slice(source.indexOf('\n') + 1)
    .replace("from '../../src/index.js'", "from '@signet/registry'");
};

it('the README shows the examples verbatim', () => {
  expect(readme).toContain(exampleOf('readme-example.ts'));
  expect(readme).toContain(exampleOf('readme-example.cjs'));
});

it('the CommonJS example prints which credential each image gets', async () => {
  const registry = await import('../src/index.js');
  const lines: unknown[][] = [];
  const run = new Function('require', 'console', exampleOf('readme-example.cjs'));
  run(
    (name: string) => {
      if (name !== '@signet/registry') throw new Error(`the example requires ${name}`);
      return registry;
    },
    { log: (...args: unknown[]) => lines.push(args) },
  );
  expect(lines).toEqual([
    ['team/app', 'basic', 'team'],
    ['other/app', 'basic', 'ci'],
  ]);
});

describe('the README example', () => {
  let group: Testbed.ProcessGroup | undefined;
  let runDir = '';
  let host = '';
  let digest = '';

  beforeAll(async () => {
    const testbed = await loadTestbed();
    const { crane } = await ensureTestTools(testbed, ['crane', 'cosign', 'registry']);
    runDir = await testbed.createRunDir('signet-registry-readme-');
    group = new testbed.ProcessGroup({ runDir, graceMs: 2_000 });
    const registry = await testbed.startRegistry({ referrers: false, group });
    host = registry.host;
    digest = await testbed.pushRandomImage(registry, 'team/app', 'v1', { crane, workDir: runDir });
    const cosign = await testbed.createCosign({ workDir: runDir });
    const key = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
    await cosign.signLegacyKeyed(`${host}/team/app@${digest}`, key);
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await group?.stopAll();
    if (runDir !== '' && !process.env.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
  });

  it('resolves the tag, reads the referrers and finds the legacy signature', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const argv = process.argv;
    try {
      process.argv = [argv[0] ?? 'node', 'inspect.ts', host, 'team/app', 'v1', host];
      await import('./helpers/readme-example.js');
      expect(log.mock.calls).toEqual([
        [`team/app:v1 is ${digest}, an image manifest`],
        ['0 referrer(s), read through the fallback-tag'],
        [`1 signature layer(s) under ${digest.replace(':', '-')}.sig`],
      ]);
    } finally {
      process.argv = argv;
      log.mockRestore();
    }
  });
});
