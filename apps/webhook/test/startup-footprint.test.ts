// What `signet` loads before it can answer its first review. Every module costs start-up time and
// resident memory (issue 17: Signet started seven times slower than policy-controller), so the
// parts only some clusters use are imported on first use: the CEL, CUE and Rego engines, the TUF
// client, the registry HTTP client, the cloud SDKs. This runs the built CLI module in a real Node
// process with a resolve hook and lists the packages it loaded.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const LAZY = [
  '@bufbuild/cel',
  '@bufbuild/protobuf',
  'tuf-js',
  'undici',
  '@aws-sdk/client-ecr',
  '@azure/identity',
  'google-auth-library',
  '@signet/policy-engines',
];

const PROBE = `
import { registerHooks } from 'node:module';
const urls = new Set();
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); urls.add(r.url); return r; } });
await import(process.argv[1]);
// Node's own bundled HTTP client, loaded by an \`import\` of node:http (see src/server.ts).
const builtinUndici = process.moduleLoadList.some((m) => m.includes('deps/undici'));
process.stdout.write(JSON.stringify({ urls: [...urls], builtinUndici }));
`;

it('loads none of the optional engines, clients and SDKs before the first review', async () => {
  const main = new URL('../dist/cli/main.js', import.meta.url).href;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', PROBE, main], {
    env: { PATH: process.env.PATH ?? '', NODE_DISABLE_COMPILE_CACHE: '1' },
  });
  const { urls, builtinUndici } = JSON.parse(stdout) as { urls: string[]; builtinUndici: boolean };
  expect(builtinUndici).toBe(false);
  // Sanity: the probe saw the CLI's own graph (the verifier and the logger).
  expect(urls.some((u) => u.includes('/verifier/dist/'))).toBe(true);
  expect(urls.some((u) => u.includes('/pino@'))).toBe(true);
  const packageOf = (url: string) =>
    decodeURIComponent(url)
      .match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)
      ?.pop()
      ?.slice(13, -1);
  const loaded = new Set(urls.map(packageOf).filter((p) => p !== undefined));
  // A workspace package resolves to its own directory, not below node_modules.
  if (urls.some((u) => u.includes('/packages/policy-engines/'))) loaded.add('@signet/policy-engines');
  expect(LAZY.filter((name) => loaded.has(name))).toEqual([]);
});
