// The release, end to end: a copy of the working tree runs `pnpm version-packages` and `pnpm
// release` (changesets `version`, then `publish`) against a real npm registry (verdaccio on
// loopback); then fresh projects outside the workspace install the public packages from it and
// run each README's examples, on every Node.js LTS the package declares.
//
// The matrix, chosen to prove each claim once and keep the wall time down:
// - npm, with `engine-strict`, once per LTS (20, 22, 24, 26), each project taking the packages
//   whose `engines` accept that Node: install, then the ESM examples (TypeScript run as is by
//   Node's type stripping on 22 and later; on 20 the JavaScript tsc emitted from them) and the
//   CJS examples, output compared with the README's;
// - pnpm (strict node_modules: a package using a dependency it does not declare fails) once, on
//   Node 26: install, every example, and a typecheck of the examples with `skipLibCheck: false`
//   by TypeScript 7 (the npm project on Node 22 typechecks them again with TypeScript 5.9); the
//   engines host finds the language packages there only through its optional peer dependencies;
// - npm on Node 26 with `@signet/policy-engines` alone: no engine package is installed, and a CUE
//   policy is refused with the package to install (ADR 26).
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type CosignKeyPair,
  createCosign,
  createRunDir,
  ensureNodeBinary,
  ensureTools,
  NODE_LTS_VERSIONS,
  type NodeBinary,
  type NpmRegistry,
  ProcessGroup,
  pushRandomImage,
  type Registry,
  runCommand,
  startNpmRegistry,
  startRegistry,
  startVault,
} from '@signet/testbed';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { type Consumer, createConsumer, type PackageManager } from '../src/consumer.ts';
import { satisfiesEngines } from '../src/engines.ts';
import { printsExpected, type ReadmeExample, readmeExamples } from '../src/readme-examples.ts';
import { appVersion, disagreeingVersions, readChartVersions } from '../src/versions.ts';
import {
  copyWorkspace,
  publicPackages,
  repositoryRoot,
  toolEnv,
  type WorkspacePackage,
  workspacePackages,
} from '../src/workspace.ts';

const RELEASE = '0.1.0';
const TYPESCRIPT = { latest: '7.0.2', oldest: '5.9.3' } as const;
const TYPES_NODE = '^22.20.7';
const log = (line: string) => process.stderr.write(`release: ${line}\n`);

/** How each README example is run: arguments and environment per `$ node <file>` line, in order. */
interface Invocation {
  readonly args: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
}

interface Fixtures {
  readonly registry: Registry;
  readonly key: CosignKeyPair;
  readonly signed: string;
  readonly unsigned: string;
  readonly kmsSigned: string;
  readonly vaultEnv: NodeJS.ProcessEnv;
}

function invocations(file: string, fixtures: Fixtures): readonly Invocation[] {
  const host = fixtures.registry.host;
  switch (file) {
    case 'verify.ts':
      return [
        { args: [fixtures.signed, fixtures.key.publicKey, host] },
        { args: [fixtures.unsigned, fixtures.key.publicKey, host] },
      ];
    case 'verify-kms.ts':
      return [{ args: [fixtures.kmsSigned, 'hashivault://release', host], env: fixtures.vaultEnv }];
    case 'inspect.ts':
      // @signet/registry's: the signed image by its repository and tag (team/app:v1).
      return [{ args: [host, 'team/app', 'v1', host] }];
    default:
      return [{ args: [] }];
  }
}

const shortName = (name: string) => name.replace('@signet/', '');

/** Type stripping without a flag: Node 22.18 and later. */
const stripsTypes = (node: NodeBinary) => satisfiesEngines(node.version, '^22.18.0 || >=23.6.0');

describe('release 0.1.0: pnpm version-packages, pnpm release, and fresh projects that install it', () => {
  const root = repositoryRoot();
  let group: ProcessGroup;
  let npmRegistry: NpmRegistry;
  let copy: string;
  let packages: WorkspacePackage[];
  let fixtures: Fixtures;
  let failed = false;
  const timings: Record<string, number> = {};
  const timed = async <T>(step: string, work: () => Promise<T>): Promise<T> => {
    const started = Date.now();
    try {
      return await work();
    } finally {
      timings[step] = Math.round((Date.now() - started) / 100) / 10;
      log(`${step}: ${timings[step]}s`);
    }
  };
  /** Examples by package, and the emitted JavaScript of the ESM ones (for Node 20). */
  const examples = new Map<string, ReturnType<typeof readmeExamples>>();
  const emitted = new Map<string, string>();

  beforeAll(async () => {
    group = new ProcessGroup({ runDir: await createRunDir('signet-release-') });
    log(`run directory ${group.runDir}`);
    try {
      npmRegistry = await timed('verdaccio started', () => startNpmRegistry({ group }));
      copy = join(group.runDir, 'workspace');
      await timed('working tree copied and installed (offline)', () => copyWorkspace(root, copy));
      // The registry for @signet packages and its token, as a maintainer's ~/.npmrc would have them.
      await writeFile(join(copy, '.npmrc'), npmRegistry.npmrc('@signet'));
      const env = toolEnv();
      await timed('pnpm version-packages', () =>
        runCommand('pnpm', ['version-packages'], { cwd: copy, env, timeoutMs: 300_000 }),
      );
      await timed('pnpm release', () =>
        runCommand('pnpm', ['release'], { cwd: copy, env, timeoutMs: 600_000 }),
      );
      packages = await publicPackages(copy);
      for (const pkg of packages) {
        examples.set(pkg.manifest.name, readmeExamples(await readFile(join(pkg.dir, 'README.md'), 'utf8')));
      }
      fixtures = await timed('registry, signed images and Vault for the examples', () =>
        startFixtures(group),
      );
    } catch (error) {
      failed = true;
      throw error;
    }
  });

  afterAll(async () => {
    await group?.stopAll();
    log(`timings ${JSON.stringify(timings)}`);
    if (failed) log(`kept ${group?.runDir}`);
    else await runCommand('rm', ['-rf', group.runDir], { timeoutMs: 120_000 }).catch(() => undefined);
  });

  const watch = () =>
    onTestFailed(() => {
      failed = true;
    });

  it(`versions every public package and the app to ${RELEASE}, with a changelog each; the chart follows`, async () => {
    watch();
    expect(await appVersion(copy)).toBe(RELEASE);
    expect(await disagreeingVersions(copy)).toEqual([]);
    expect(await readChartVersions(copy)).toEqual({ version: RELEASE, appVersion: RELEASE });
    for (const dir of [...packages.map((p) => p.dir), join(copy, 'apps/webhook')]) {
      const changelog = await readFile(join(dir, 'CHANGELOG.md'), 'utf8');
      expect(changelog, dir).toMatch(
        new RegExp(`^# @signet/[\\w-]+\\n\\n## ${RELEASE.replaceAll('.', '\\.')}\\n`),
      );
    }
    // The other private packages are not versioned.
    for (const pkg of await workspacePackages(copy)) {
      if (pkg.manifest.private === true && pkg.manifest.name !== '@signet/webhook') {
        expect(pkg.manifest.version, pkg.manifest.name).toBe('0.0.0');
      }
    }
    // Every pending changeset was consumed.
    const left = (await readdir(join(copy, '.changeset'))).filter(
      (f) => f.endsWith('.md') && f !== 'README.md',
    );
    expect(left).toEqual([]);
    // `signet --version` of the released tree (the repository's build, reading the copy's package).
    await runCommand('cp', ['-r', join(root, 'apps/webhook/dist'), join(copy, 'apps/webhook/dist')], {
      timeoutMs: 60_000,
    });
    const { stdout } = await runCommand(
      process.execPath,
      [join(copy, 'apps/webhook/dist/bin/signet.js'), '--version'],
      {
        timeoutMs: 30_000,
      },
    );
    expect(stdout.trim()).toBe(`signet ${RELEASE}`);
  });

  it('publishes exactly the public packages, each as npm pack lists it, workspace ranges resolved', async () => {
    watch();
    for (const pkg of packages) {
      const name = pkg.manifest.name;
      const packument = await npmRegistry.packument(name);
      expect(packument?.['dist-tags'].latest, name).toBe(RELEASE);
      const published = packument?.versions[RELEASE];
      expect(JSON.stringify(published), name).not.toContain('workspace:');
      for (const [dependency, range] of Object.entries(published?.dependencies ?? {})) {
        if (dependency.startsWith('@signet/')) expect(range, `${name} -> ${dependency}`).toBe(`^${RELEASE}`);
      }
      const tarball = join(group.runDir, `${shortName(name)}.tgz`);
      const response = await fetch(published?.dist.tarball ?? '', { signal: AbortSignal.timeout(120_000) });
      await writeFile(tarball, Buffer.from(await response.arrayBuffer()));
      const { stdout: listed } = await runCommand('tar', ['-tzf', tarball], { timeoutMs: 60_000 });
      const inTarball = listed
        .split('\n')
        .filter(Boolean)
        .map((entry) => entry.replace(/^package\//, ''))
        .sort();
      const { stdout: packed } = await runCommand(
        'npm',
        ['pack', '--dry-run', '--json', '--ignore-scripts'],
        {
          cwd: pkg.dir,
          env: toolEnv(),
          timeoutMs: 120_000,
        },
      );
      const npmList = (JSON.parse(packed) as [{ files: { path: string }[] }])[0].files
        .map((f) => f.path)
        .sort();
      expect(inTarball, name).toEqual(npmList);
      expect(inTarball, name).toEqual(expect.arrayContaining(['CHANGELOG.md', 'LICENSE', 'README.md']));
    }
    const { stdout: tags } = await runCommand('git', ['tag', '--list'], { cwd: copy, timeoutMs: 30_000 });
    expect(tags.split('\n').filter(Boolean).sort()).toEqual(
      packages.map((p) => `${p.manifest.name}@${RELEASE}`).sort(),
    );
  });

  it('never publishes the private packages (the app, e2e, the testbed, this package)', async () => {
    watch();
    const privates = (await workspacePackages(copy)).filter((p) => p.manifest.private === true);
    expect(privates.map((p) => p.manifest.name)).toEqual(
      expect.arrayContaining(['@signet/webhook', '@signet/e2e', '@signet/testbed', '@signet/release']),
    );
    for (const pkg of privates)
      expect(await npmRegistry.packument(pkg.manifest.name), pkg.manifest.name).toBeUndefined();
  });

  /** Writes every example of `selected` into the project and runs them on its Node. */
  const runExamples = async (consumer: Consumer, selected: readonly WorkspacePackage[]) => {
    for (const pkg of selected) {
      const { examples: list, runs } = examples.get(pkg.manifest.name) ?? { examples: [], runs: [] };
      for (const example of list) {
        const path = join('examples', shortName(pkg.manifest.name), example.file);
        await consumer.write(path, example.code);
        const file = runnable(consumer, pkg, example, path);
        if (file === undefined) continue;
        const expected = runs.filter((run) => run.file === example.file);
        const planned = invocations(example.file, fixtures);
        expect(expected.length, `${pkg.manifest.name} ${example.file}: README runs`).toBe(planned.length);
        for (const [i, invocation] of planned.entries()) {
          const { stdout } = await consumer.run(file, invocation.args, invocation.env);
          const lines = expected[i]?.output ?? [];
          const where = `${consumer.packageManager} on Node ${consumer.node.version}: ${pkg.manifest.name} ${expected[i]?.command}`;
          expect(
            printsExpected(lines, stdout),
            `${where}\nexpected:\n${lines.join('\n')}\ngot:\n${stdout}`,
          ).toBe(true);
        }
      }
    }
  };

  /** The file to run for an example on the project's Node, or undefined when it cannot run there. */
  const runnable = (consumer: Consumer, pkg: WorkspacePackage, example: ReadmeExample, path: string) => {
    if (example.module === 'cjs' || stripsTypes(consumer.node)) return path;
    const js = emitted.get(`${pkg.manifest.name}/${example.file}`);
    if (js === undefined) throw new Error(`no JavaScript emitted for ${path}`);
    return js;
  };

  const consumerFor = async (
    manager: PackageManager,
    node: NodeBinary,
    selected: readonly WorkspacePackage[],
    devDependencies: Record<string, string> = {},
  ) => {
    const dependencies = Object.fromEntries(selected.map((p) => [p.manifest.name, RELEASE]));
    const consumer = await timed(`${manager} install on Node ${node.version}`, () =>
      createConsumer({
        dir: join(group.runDir, `consumer-${manager}-node${node.version.split('.')[0]}`),
        node,
        packageManager: manager,
        npmrc: npmRegistry.npmrc('@signet', { withToken: false }),
        dependencies,
        devDependencies,
      }),
    );
    const installed = JSON.parse(
      await readFile(join(consumer.dir, 'node_modules', '@signet', 'core', 'package.json'), 'utf8').catch(
        () => '{}',
      ),
    ) as { version?: string };
    if (selected.some((p) => p.manifest.name === '@signet/core')) expect(installed.version).toBe(RELEASE);
    return consumer;
  };

  const typecheck = async (consumer: Consumer) => {
    await consumer.write(
      'tsconfig.json',
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          skipLibCheck: false,
          types: ['node'],
          rootDir: '.',
          outDir: 'build',
          noEmitOnError: true,
        },
        include: ['examples/**/*.ts'],
      }),
    );
    await consumer.tsc(['-p', 'tsconfig.json']);
  };

  const writeExamples = async (consumer: Consumer, selected: readonly WorkspacePackage[]) => {
    for (const pkg of selected) {
      for (const example of examples.get(pkg.manifest.name)?.examples ?? []) {
        await consumer.write(join('examples', shortName(pkg.manifest.name), example.file), example.code);
      }
    }
  };

  const copyEmitted = async (consumer: Consumer) => {
    const from = join(group.runDir, 'consumer-pnpm-node26', 'build');
    await mkdir(join(consumer.dir, 'build'), { recursive: true });
    await runCommand('cp', ['-r', `${from}/.`, join(consumer.dir, 'build')], { timeoutMs: 60_000 });
  };

  /** `npm install <pkg>@RELEASE` in the project on its Node (engine-strict, from its .npmrc). */
  const installOne = async (consumer: Consumer, pkg: WorkspacePackage) => {
    const npm = (await runCommand('sh', ['-c', 'command -v npm'], { timeoutMs: 10_000 })).stdout.trim();
    return runCommand(
      consumer.node.path,
      [npm, 'install', '--no-audit', '--prefer-offline', `${pkg.manifest.name}@${RELEASE}`],
      {
        cwd: consumer.dir,
        env: toolEnv({ PATH: `${consumer.node.binDir}:${process.env.PATH ?? ''}` }),
        timeoutMs: 300_000,
      },
    );
  };

  it('pnpm on Node 26: installs every public package, runs each README example, typechecks them (TypeScript 7, skipLibCheck false)', async () => {
    watch();
    const node = await ensureNodeBinary(NODE_LTS_VERSIONS[26], { onProgress: log });
    const consumer = await consumerFor('pnpm', node, packages, {
      typescript: TYPESCRIPT.latest,
      '@types/node': TYPES_NODE,
    });
    // Written first (typecheck needs the files), then checked, then run.
    await writeExamples(consumer, packages);
    await timed('typecheck with TypeScript 7 (pnpm project)', () => typecheck(consumer));
    for (const pkg of packages) {
      for (const example of examples.get(pkg.manifest.name)?.examples ?? []) {
        if (example.module !== 'esm') continue;
        const js = join('examples', shortName(pkg.manifest.name), example.file.replace(/\.ts$/, '.js'));
        emitted.set(`${pkg.manifest.name}/${example.file}`, join('build', js));
      }
    }
    await timed('examples (pnpm, Node 26)', () => runExamples(consumer, packages));
  });

  it('npm installs @signet/policy-engines without an engine; a CUE policy then names the package it needs', async () => {
    watch();
    const node = await ensureNodeBinary(NODE_LTS_VERSIONS[26], { onProgress: log });
    const host = packages.filter((p) => p.manifest.name === '@signet/policy-engines');
    expect(host).toHaveLength(1);
    const consumer = await timed('npm install of the engines host alone', () =>
      createConsumer({
        dir: join(group.runDir, 'consumer-npm-host-only'),
        node,
        packageManager: 'npm',
        npmrc: npmRegistry.npmrc('@signet', { withToken: false }),
        dependencies: { '@signet/policy-engines': RELEASE },
      }),
    );
    // The engines are optional peers: npm installs neither (before ADR 26, 74 MB came with it).
    expect((await readdir(join(consumer.dir, 'node_modules', '@signet'))).sort()).toEqual(['policy-engines']);
    await consumer.write(
      'cue.js',
      `import { createPolicyEngines } from '@signet/policy-engines';
const engines = createPolicyEngines();
await engines.compile('cue', 'a: 1').catch((error) => console.log(error.code, error.message));
await engines.close();
`,
    );
    const { stdout } = await consumer.run('cue.js');
    expect(stdout.trim()).toBe(
      'ENGINE_NOT_INSTALLED a CUE policy needs @signet/policy-engine-cue; install it (npm install @signet/policy-engine-cue)',
    );
  });

  describe.each(([20, 22, 24, 26] as const).map((major) => [major] as const))('npm on Node %s', (major) => {
    it('installs each package that declares this Node (engine-strict) and runs its README examples', async () => {
      watch();
      const node = await ensureNodeBinary(NODE_LTS_VERSIONS[major], { onProgress: log });
      const selected = packages.filter((p) => satisfiesEngines(node.version, p.manifest.engines?.node ?? ''));
      expect(selected.length, `packages for Node ${node.version}`).toBeGreaterThan(0);
      log(`Node ${node.version}: ${selected.map((p) => p.manifest.name).join(', ')}`);
      const oldestTypeScript = major === 22;
      const consumer = await consumerFor(
        'npm',
        node,
        selected,
        oldestTypeScript ? { typescript: TYPESCRIPT.oldest, '@types/node': TYPES_NODE } : {},
      );
      if (oldestTypeScript) {
        await writeExamples(consumer, selected);
        await timed('typecheck with TypeScript 5.9 (npm project, Node 22)', () => typecheck(consumer));
      }
      // Node 20 cannot run TypeScript: the JavaScript tsc emitted in the pnpm project.
      if (!stripsTypes(node)) await copyEmitted(consumer);
      await timed(`examples (npm, Node ${node.version})`, () => runExamples(consumer, selected));
      // Packages that do not declare this Node are refused by an engine-strict install.
      const refused = packages.find((p) => !selected.includes(p));
      if (refused)
        await expect(installOne(consumer, refused)).rejects.toThrow(/EBADENGINE|Unsupported engine/);
    });
  });
});

/** A registry with a signed and an unsigned image, and one signed through Vault's transit engine. */
async function startFixtures(group: ProcessGroup): Promise<Fixtures> {
  const [{ crane }, registry, cosign, vault] = await Promise.all([
    ensureTools(['crane']),
    startRegistry({ referrers: false, group }),
    createCosign({ workDir: group.runDir }),
    startVault({ group }),
  ]);
  const push = async (repo: string) =>
    `${registry.host}/${repo}@${await pushRandomImage(registry, repo, 'v1', { crane, workDir: group.runDir })}`;
  const [signed, unsigned, kmsSigned] = await Promise.all([
    push('team/app'),
    push('team/unsigned'),
    push('team/kms'),
  ]);
  const key = await cosign.generateKeyPair(join(group.runDir, 'keys'), 'release-example');
  await cosign.signLegacyKeyed(signed, key);
  await vault.api('POST', 'transit/keys/release', { type: 'ecdsa-p256' });
  await cosign.signWithKms(kmsSigned, 'hashivault://release', vault.clientEnv);
  return { registry, key, signed, unsigned, kmsSigned, vaultEnv: vault.clientEnv };
}
