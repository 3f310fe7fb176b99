// Item: one version for the libraries, the app, its chart, its image and its CLI. The image's
// label is read from a real image in the kind suite (e2e/test/kind.test.ts); here, what the build
// is given.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '@signet/testbed';
import { describe, expect, it } from 'vitest';
import {
  APP_PACKAGE,
  appVersion,
  disagreeingVersions,
  readChangesetsConfig,
  readChartVersions,
  versionSources,
} from '../src/versions.ts';
import { publicPackages, repositoryRoot, workspacePackages } from '../src/workspace.ts';

const root = repositoryRoot();

describe('one version', () => {
  it('every public package, the app and its chart carry the same version', async () => {
    const sources = await versionSources(root);
    expect(Object.keys(sources).length).toBeGreaterThanOrEqual(8);
    expect(await disagreeingVersions(root)).toEqual([]);
  });

  it('changesets versions the libraries and the app as one fixed group, and no other private package', async () => {
    const config = await readChangesetsConfig(root);
    const published = (await publicPackages(root)).map((p) => p.manifest.name);
    expect(config.fixed).toHaveLength(1);
    expect([...(config.fixed[0] ?? [])].sort()).toEqual([...published, APP_PACKAGE].sort());
    expect(config.privatePackages).toEqual({ version: true, tag: false });
    const otherPrivate = (await workspacePackages(root))
      .filter((p) => p.manifest.private === true && p.manifest.name !== APP_PACKAGE)
      .map((p) => p.manifest.name);
    expect([...config.ignore].sort()).toEqual(otherPrivate.sort());
  });

  it('signet --version prints it', async () => {
    const { stdout } = await runCommand(
      process.execPath,
      [join(root, 'apps/webhook/dist/bin/signet.js'), '--version'],
      {
        timeoutMs: 30_000,
      },
    );
    expect(stdout.trim()).toBe(`signet ${await appVersion(root)}`);
  });

  it('the image build labels the image with the version of @signet/webhook', async () => {
    const dockerfile = await readFile(join(root, 'apps/webhook/image/Dockerfile.offline'), 'utf8');
    expect(dockerfile).toMatch(/^ARG SIGNET_VERSION$/m);
    expect(dockerfile).toMatch(/org\.opencontainers\.image\.version="\$\{SIGNET_VERSION\}"/);
    const script = await readFile(join(root, 'apps/webhook/image/build-offline.sh'), 'utf8');
    expect(script).toContain('--build-arg "SIGNET_VERSION=$version"');
    expect(script).toMatch(/^version=\$\(.*apps\/webhook\/package\.json.*\)$/m);
  });

  it('after changeset version, scripts/sync-versions.mjs gives the chart the app version and checks the libraries', async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'signet-versions-'));
    try {
      const files = [
        'pnpm-workspace.yaml',
        'apps/webhook/chart/Chart.yaml',
        ...(await publicPackages(root)).map((pkg) => `${pkg.path}/package.json`),
      ];
      for (const file of files) await cp(join(root, file), join(scratch, file));
      const bump = async (path: string) => {
        const manifest = JSON.parse(await readFile(join(scratch, path), 'utf8'));
        await writeFile(join(scratch, path), JSON.stringify({ ...manifest, version: '1.2.3' }));
      };
      await cp(join(root, 'apps/webhook/package.json'), join(scratch, 'apps/webhook/package.json'));
      await bump('apps/webhook/package.json');
      const before = await readFile(join(scratch, 'apps/webhook/chart/Chart.yaml'), 'utf8');
      const sync = () =>
        runCommand(process.execPath, [join(root, 'scripts/sync-versions.mjs'), scratch], {
          timeoutMs: 30_000,
        });
      // The libraries still say the old version: the chart is written, and the disagreement fails.
      await expect(sync()).rejects.toThrow(/versions disagree with @signet\/webhook 1\.2\.3/);
      expect(await readChartVersions(scratch)).toEqual({ version: '1.2.3', appVersion: '1.2.3' });
      const after = await readFile(join(scratch, 'apps/webhook/chart/Chart.yaml'), 'utf8');
      const unchanged = (text: string) => text.split('\n').filter((line) => !/^(app)?[vV]ersion:/.test(line));
      expect(unchanged(after)).toEqual(unchanged(before));
      for (const pkg of await publicPackages(scratch)) await bump(`${pkg.path}/package.json`);
      expect((await sync()).stdout).toContain('every version is 1.2.3');
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
});
