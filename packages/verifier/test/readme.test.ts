// The README holds: its API table lists exactly what `src/index.ts` exports, and its example is
// `support/readme-example.ts` verbatim and prints what the README says, against a real registry
// and images signed by the real cosign.
import { readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { apiTableNames, exportedNames } from '../../../scripts/readme-api.ts';
import { ensureTestTools, loadTestbed, type Testbed } from './support/registry-helpers.js';

const SETUP_TIMEOUT = 30 * 60_000;
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

it('the API table lists every export of src/index.ts, once', () => {
  const listed = apiTableNames(readme);
  expect([...listed].sort()).toEqual(
    exportedNames(readFileSync(new URL('../src/index.ts', import.meta.url), 'utf8')),
  );
});

it('the README shows the example verbatim', () => {
  const source = readFileSync(new URL('./support/readme-example.ts', import.meta.url), 'utf8');
  const example = source
    .slice(source.indexOf('\n') + 1)
    .replace("from '../../src/index.js'", "from '@signet/verifier'");
  expect(readme).toContain(example);
});

describe('the README example', () => {
  let group: Testbed.ProcessGroup | undefined;
  let runDir = '';
  let host = '';
  let signed = '';
  let unsigned = '';
  let keyFile = '';

  beforeAll(async () => {
    const testbed = await loadTestbed();
    const { crane } = await ensureTestTools(testbed, ['crane', 'cosign', 'registry']);
    runDir = await testbed.createRunDir('signet-verifier-readme-');
    group = new testbed.ProcessGroup({ runDir, graceMs: 2_000 });
    const registry = await testbed.startRegistry({ referrers: false, group });
    host = registry.host;
    const push = async (tag: string) =>
      `${host}/team/app@${await testbed.pushRandomImage(registry, 'team/app', tag, { crane, workDir: runDir })}`;
    [signed, unsigned] = [await push('signed'), await push('unsigned')];
    const cosign = await testbed.createCosign({ workDir: runDir });
    const key = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
    await cosign.signLegacyKeyed(signed, key);
    keyFile = key.publicKey;
    expect(await readFile(keyFile, 'utf8')).toContain('PUBLIC KEY');
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await group?.stopAll();
    if (runDir !== '' && !process.env.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
  });

  it('passes the signed image and says what the unsigned one lacks', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const argv = process.argv;
    try {
      for (const image of [signed, unsigned]) {
        process.argv = [argv[0] ?? 'node', 'verify.ts', image, keyFile, host];
        vi.resetModules();
        await import('./support/readme-example.js');
      }
      expect(log.mock.calls).toEqual([
        ['release', 'passed (authority release-key)'],
        ['release', 'failed: no signature found'],
      ]);
    } finally {
      process.argv = argv;
      log.mockRestore();
    }
  });
});
