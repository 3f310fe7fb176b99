// A language's engine package that is not installed. A project laid out as npm installs it (this
// package's build in node_modules, @signet/policy-engine-rego beside it, no
// @signet/policy-engine-cue) runs a real Node process: resolution is Node's own, nothing is faked.
// A CUE policy is refused with ENGINE_NOT_INSTALLED naming the package to install, Rego runs, and a
// language package that is installed but not built is unavailable, not missing.
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand } from '@signet/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
const REGO_DIR = join(PACKAGE_DIR, '..', 'policy-engine-rego');

// Compiles and evaluates one policy per language, printing each outcome or error as JSON.
const PROGRAM = `
import { createPolicyEngines } from '@signet/policy-engines';
const engines = createPolicyEngines();
const results = {};
for (const [language, source] of [['cue', 'a: 1'], ['rego', 'package sigstore\\nisCompliant = input.a == 1']]) {
  try {
    const policy = await engines.compile(language, source);
    results[language] = await policy.evaluate({ a: 1 });
  } catch (error) {
    results[language] = { name: error.name, code: error.code, message: error.message, cause: error.cause?.code };
  }
}
await engines.close();
console.log(JSON.stringify(results));
`;

describe('a language whose package is not installed', () => {
  let project: string;

  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'signet-engine-packages-'));
    const host = join(project, 'node_modules', '@signet', 'policy-engines');
    // A copy, not a link: a link resolves from this workspace, where every language is installed.
    await mkdir(host, { recursive: true });
    await cp(join(PACKAGE_DIR, 'package.json'), join(host, 'package.json'));
    await cp(join(PACKAGE_DIR, 'dist'), join(host, 'dist'), { recursive: true });
    await symlink(REGO_DIR, join(project, 'node_modules', '@signet', 'policy-engine-rego'), 'dir');
    await writeFile(join(project, 'package.json'), '{ "type": "module" }\n');
    await writeFile(join(project, 'check.js'), PROGRAM);
  });

  afterAll(async () => {
    if (project !== undefined) await rm(project, { recursive: true, force: true });
  });

  const check = async () => {
    const { stdout } = await runCommand(process.execPath, ['check.js'], { cwd: project, timeoutMs: 60_000 });
    return JSON.parse(stdout) as Record<'cue' | 'rego', unknown>;
  };

  it('is refused with ENGINE_NOT_INSTALLED, naming the package; the installed language runs', async () => {
    expect(await check()).toEqual({
      cue: {
        name: 'PolicyEngineError',
        code: 'ENGINE_NOT_INSTALLED',
        message:
          'a CUE policy needs @signet/policy-engine-cue; install it (npm install @signet/policy-engine-cue)',
        cause: 'ERR_MODULE_NOT_FOUND',
      },
      rego: { passed: true },
    });
  });

  it('is unavailable, not missing, when its package is installed without its build', async () => {
    const cue = join(project, 'node_modules', '@signet', 'policy-engine-cue');
    await mkdir(cue, { recursive: true });
    await cp(join(PACKAGE_DIR, '..', 'policy-engine-cue', 'package.json'), join(cue, 'package.json'));
    try {
      expect((await check()).cue).toMatchObject({
        code: 'ENGINE_UNAVAILABLE',
        message: expect.stringMatching(/^@signet\/policy-engine-cue did not load: /),
        cause: 'ERR_MODULE_NOT_FOUND',
      });
    } finally {
      await rm(cue, { recursive: true, force: true });
    }
  });
});
