// What `signet` loads before it can answer its first review. Every module costs start-up time and
// resident memory (issue 17: Signet started seven times slower than policy-controller), so the
// parts only some clusters use are imported on first use: the CEL, CUE and Rego engines, the TUF
// client, the registry HTTP client, the cloud SDKs, the Kubernetes client (ADR 0014). This runs the built CLI module in a real Node
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
  '@kubernetes/client-node',
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

// The two commands that read policies from files run without a cluster, so without its client: a
// whole `signet verify --policy-file` (an image no policy matches: nothing is fetched) and a
// server started as `signet serve --policy-file` starts it, answering on its port.
const POLICY_FILE_PROBE = `
import { registerHooks } from 'node:module';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const urls = new Set();
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); urls.add(r.url); return r; } });
const dist = process.argv[1];
const dir = mkdtempSync(join(tmpdir(), 'signet-footprint-'));
const policy = join(dir, 'policy.yaml');
writeFileSync(policy, 'apiVersion: policy.sigstore.dev/v1beta1\\nkind: ClusterImagePolicy\\nmetadata: { name: team }\\nspec:\\n  images: [{ glob: "registry.example/team/**" }]\\n  authorities: [{ static: { action: pass } }]\\n');
const { main } = await import(dist + '/cli/main.js');
const sink = { write: () => true };
const image = 'registry.example/other/app@sha256:' + '0'.repeat(64);
const verified = await main(['verify', image, '--policy-file', policy], { stdout: sink, stderr: sink });
const { createCertificateAuthority, issueServingCertificate } = await import(dist + '/certificates.js');
const ca = await createCertificateAuthority('footprint', 1);
const serving = await issueServingCertificate(ca, ['localhost'], 1);
writeFileSync(join(dir, 'tls.crt'), serving.cert);
writeFileSync(join(dir, 'tls.key'), serving.key);
const { serveConfigFrom } = await import(dist + '/commands/serve-config.js');
const { startSignet } = await import(dist + '/signet.js');
const config = serveConfigFrom({ 'policy-file': [policy], 'tls-cert-file': join(dir, 'tls.crt'), 'tls-key-file': join(dir, 'tls.key'), port: '0', 'ops-port': '0', host: '127.0.0.1', 'log-level': 'silent' }, {});
const signet = await startSignet(config);
const listening = signet.servers.port > 0;
await signet.stop(0);
process.stdout.write(JSON.stringify({ urls: [...urls], verified, listening }));
`;

it('loads no Kubernetes client for `signet verify --policy-file` nor `signet serve --policy-file`', async () => {
  const dist = new URL('../dist', import.meta.url).href;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', POLICY_FILE_PROBE, dist],
    { env: { PATH: process.env.PATH ?? '', NODE_DISABLE_COMPILE_CACHE: '1' } },
  );
  const { urls, verified, listening } = JSON.parse(stdout) as {
    urls: string[];
    verified: number;
    listening: boolean;
  };
  // Sanity: the verify ran to a decision and the server listened.
  expect([verified === 0 || verified === 1, listening]).toEqual([true, true]);
  expect(urls.filter((u) => u.includes('/@kubernetes/client-node/'))).toEqual([]);
});
