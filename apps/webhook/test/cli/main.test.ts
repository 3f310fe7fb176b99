// The `signet` command line as a user meets it: help, version, and one clear line for every
// mistake, never a stack trace.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueServingCertificate } from '../../src/certificates.js';
import { main } from '../../src/cli/main.js';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

async function run(...argv: string[]) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main(argv, { stdout, stderr });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

const dir = mkdtempSync(join(tmpdir(), 'signet-cli-'));
const policy = join(dir, 'policy.yaml');
writeFileSync(
  policy,
  'apiVersion: policy.sigstore.dev/v1beta1\nkind: ClusterImagePolicy\nmetadata: {name: all}\nspec:\n  images: [{glob: "**"}]\n  authorities: [{static: {action: pass}}]\n',
);

describe('help and version', () => {
  it('prints the usage, per-command help and the version', async () => {
    const usage = await run('--help');
    expect(usage.code).toBe(0);
    expect(usage.stdout).toContain('signet serve ');
    expect(usage.stdout).toContain('signet verify ');
    const serve = await run('serve', '--help');
    expect(serve).toMatchObject({ code: 0 });
    expect(serve.stdout).toMatch(
      /--cache-ttl DURATION\s+how long a verification pass is reused .*\(default 5m\)/,
    );
    const verify = await run('verify', '-h');
    expect(verify.stdout).toMatch(/--policy-file, --policy FILE/);
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(await run('--version')).toMatchObject({ code: 0, stdout: `signet ${pkg.version}\n` });
    expect(await run()).toMatchObject({ code: 2 });
  });
});

describe('mistakes are one line and exit 2', () => {
  const oneLine = (result: { stderr: string }) => {
    const [first, ...rest] = result.stderr.trimEnd().split('\n');
    expect(rest.filter((l) => !l.startsWith("Run 'signet"))).toEqual([]);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    return first;
  };

  it('an unknown command or flag, a bad value', async () => {
    const unknown = await run('vrify');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "vrify"');
    const flag = await run('verify', 'x', '--polcy', policy);
    expect(flag.code).toBe(2);
    expect(oneLine(flag)).toMatch(/^signet verify: Unknown option '--polcy'/);
    const ttl = await run(
      'serve',
      '--policy-file',
      policy,
      '--cache-ttl',
      'soon',
      '--tls-cert-file',
      'a',
      '--tls-key-file',
      'b',
    );
    expect(oneLine(ttl)).toBe('signet serve: --cache-ttl must be a duration like 5m or 30s, got "soon"');
  });

  it('a missing file, bad YAML', async () => {
    const missing = await run('verify', 'registry.example/app:v1', '--policy', join(dir, 'nope.yaml'));
    expect(missing.code).toBe(2);
    expect(oneLine(missing)).toBe(`signet verify: ${join(dir, 'nope.yaml')}: no such file or directory`);
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'a: [unclosed\n');
    const yaml = await run('verify', 'registry.example/app:v1', '--policy-file', bad);
    expect(yaml.code).toBe(2);
    expect(oneLine(yaml)).toMatch(
      new RegExp(`^signet verify: ${bad}: document 1: .* at line \\d+, column \\d+$`),
    );
  });

  it('a policy file with an object that does not parse, next to valid ones: refuses to start, naming file, object and field', async () => {
    const broken = join(dir, 'broken.yaml');
    writeFileSync(
      broken,
      `${readFileSync(policy, 'utf8')}---\napiVersion: policy.sigstore.dev/v1beta1\nkind: ClusterImagePolicy\nmetadata: {name: typo}\nspec:\n  images: [{glob: 1}]\n  authorities: [{static: {action: pass}}]\n`,
    );
    const serve = await run('serve', '--policy-file', broken, '--tls-cert-file', 'x', '--tls-key-file', 'y');
    expect(serve.code).toBe(2);
    expect(oneLine(serve)).toBe(
      `signet serve: cannot use the policy files: ${broken}: ClusterImagePolicy/typo: spec.images[0].glob: must be a string, got number (in ClusterImagePolicy/typo)`,
    );
    const verify = await run('verify', 'registry.example/app:v1', '--policy-file', broken);
    expect(verify.code).toBe(2);
    expect(oneLine(verify)).toContain('ClusterImagePolicy/typo: spec.images[0].glob: must be a string');
  });

  it('a key given as the certificate, a port in use', async () => {
    const ca = await createCertificateAuthority('cli-test', 1);
    const pair = await issueServingCertificate(ca, ['127.0.0.1'], 1);
    writeFileSync(join(dir, 'tls.crt'), pair.cert);
    writeFileSync(join(dir, 'tls.key'), pair.key);
    const swapped = await run(
      'serve',
      '--policy-file',
      policy,
      '--tls-cert-file',
      join(dir, 'tls.key'),
      '--tls-key-file',
      join(dir, 'tls.crt'),
    );
    expect(swapped.code).toBe(2);
    expect(oneLine(swapped)).toBe(
      `signet serve: ${join(dir, 'tls.key')}: not a PEM certificate (it holds a private key: that goes to the key file)`,
    );
    const busy = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => busy.once('listening', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const inUse = await run(
        'serve',
        '--policy-file',
        policy,
        '--tls-cert-file',
        join(dir, 'tls.crt'),
        '--tls-key-file',
        join(dir, 'tls.key'),
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--log-level',
        'silent',
      );
      expect(inUse.code).toBe(2);
      expect(oneLine(inUse)).toBe(`signet serve: 127.0.0.1:${port}: address already in use`);
    } finally {
      busy.close();
    }
  });
});

describe('signet migrate', () => {
  it('takes one action, check, and says so otherwise', async () => {
    const none = await run('migrate');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('signet migrate: migrate takes one action, check; got ""');
    expect((await run('migrate', 'apply')).stderr).toContain('got "apply"');
    expect((await run('migrate', '--help')).stdout).toContain('usage: signet migrate check');
  });

  it('says in one line that the cluster cannot be reached', async () => {
    // A port just freed: nothing listens there (port 1 is one fetch refuses to dial at all).
    const server = createServer();
    const port = await new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
    );
    await new Promise((resolve) => server.close(resolve));
    const kubeconfig = join(dir, 'dead.kubeconfig');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n`,
    );
    const result = await run('migrate', 'check', '--kubeconfig', kubeconfig);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(
        `^signet migrate: cannot read the cluster: GET /apis/apiextensions\\.k8s\\.io/v1/customresourcedefinitions/\\S+: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\n$`,
      ),
    );
  });
});
