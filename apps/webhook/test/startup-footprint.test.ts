// What `signet` loads before it can answer its first review. Every module costs start-up time and
// resident memory (issue 17: Signet started seven times slower than policy-controller), so the
// parts only some clusters use are imported on first use: the CEL, CUE and Rego engines, the TUF
// client, the registry HTTP client, the cloud SDKs, the Kubernetes client (ADR 0018). express (about 130 modules) is the HTTP layer
// of `signet serve` only: `signet verify` and `signet audit` never load it. This runs the built CLI
// in a real Node process with a resolve hook and lists the packages it loaded.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueServingCertificate } from '../src/certificates.js';

const LAZY = [
  '@bufbuild/cel',
  '@bufbuild/protobuf',
  'tuf-js',
  'undici',
  '@aws-sdk/client-ecr',
  '@azure/identity',
  'google-auth-library',
  '@signet/policy-engines',
  '@signet/policy-engine-cue',
  '@signet/policy-engine-rego',
  '@kubernetes/client-node',
];

// Loads the CLI's module graph, and with arguments runs the command: until it exits, or for
// `serve`, until its /readyz answers. Prints the module URLs resolved by then.
const PROBE = `
import { registerHooks } from 'node:module';
const urls = new Set();
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); urls.add(r.url); return r; } });
const { main } = await import(process.argv[1]);
const [readyz, ...argv] = process.argv.slice(2);
if (argv.length > 0) {
  const { Writable } = await import('node:stream');
  const sink = new Writable({ write(_c, _e, done) { done(); } });
  const ran = main(argv, { stdout: sink, stderr: sink });
  if (readyz) {
    // node:http through require: fetch (or an import of node:http) would load Node's bundled undici.
    const { createRequire } = await import('node:module');
    const { get } = createRequire(process.cwd() + '/')('node:http');
    const ready = () => new Promise((resolve) => get(readyz, (res) => { res.resume(); resolve(res.statusCode === 200); }).on('error', () => resolve(false)));
    while (!(await ready())) await new Promise((resolve) => setTimeout(resolve, 50));
  } else {
    await ran;
  }
}
// Node's own bundled HTTP client, loaded by an \`import\` of node:http (see src/server.ts).
const builtinUndici = process.moduleLoadList.some((m) => m.includes('deps/undici'));
process.stdout.write(JSON.stringify({ urls: [...urls], builtinUndici }));
process.exit(0);
`;

let dir = '';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signet-footprint-'));
  const ca = await createCertificateAuthority('signet-footprint', 1);
  const serving = await issueServingCertificate(ca, ['127.0.0.1'], 1);
  await writeFile(join(dir, 'tls.crt'), serving.cert);
  await writeFile(join(dir, 'tls.key'), serving.key);
  await writeFile(
    join(dir, 'policy.yaml'),
    'apiVersion: policy.sigstore.dev/v1beta1\nkind: ClusterImagePolicy\nmetadata: {name: p}\nspec:\n  images: [{glob: "registry.invalid/**"}]\n  authorities: [{static: {action: pass}}]\n',
  );
  // Runs an image no policy matches: judged without a registry.
  await writeFile(
    join(dir, 'pod.yaml'),
    'apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers: [{name: c, image: "elsewhere.invalid/app@sha256:0000000000000000000000000000000000000000000000000000000000000000"}]\n',
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The packages the CLI loaded, running `args` (none: only its module graph). */
async function loadedBy(args: readonly string[], readyz = ''): Promise<Set<string>> {
  const main = new URL('../dist/cli/main.js', import.meta.url).href;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', PROBE, main, readyz, ...args],
    { env: { PATH: process.env.PATH ?? '', NODE_DISABLE_COMPILE_CACHE: '1' }, timeout: 60_000 },
  );
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
  for (const engines of ['policy-engines', 'policy-engine-cue', 'policy-engine-rego']) {
    if (urls.some((u) => u.includes(`/packages/${engines}/`))) loaded.add(`@signet/${engines}`);
  }
  return loaded;
}

describe('start-up footprint', () => {
  it('loads none of the optional engines, clients and SDKs before the first review, nor express', async () => {
    const loaded = await loadedBy([]);
    expect([...LAZY, 'express'].filter((name) => loaded.has(name))).toEqual([]);
  });

  it('`signet verify` and `signet audit` judge without loading express', async () => {
    const files = ['--policy-file', join(dir, 'policy.yaml')];
    const verify = await loadedBy(['verify', '--resource', join(dir, 'pod.yaml'), ...files]);
    const audit = await loadedBy(['audit', '-f', join(dir, 'pod.yaml'), ...files]);
    expect([...LAZY, 'express'].filter((name) => verify.has(name) || audit.has(name))).toEqual([]);
  });

  it('`signet serve` loads express for its HTTP layer, and still none of the optional parts', async () => {
    const [port, opsPort] = [0, await freePort()];
    const serve = await loadedBy(
      [
        'serve',
        `--port=${port}`,
        `--ops-port=${opsPort}`,
        '--host=127.0.0.1',
        '--policy-file',
        join(dir, 'policy.yaml'),
        `--tls-cert-file=${join(dir, 'tls.crt')}`,
        `--tls-key-file=${join(dir, 'tls.key')}`,
        '--log-level=silent',
      ],
      `http://127.0.0.1:${opsPort}/readyz`,
    );
    expect(serve.has('express')).toBe(true);
    expect(LAZY.filter((name) => serve.has(name))).toEqual([]);
  });
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
