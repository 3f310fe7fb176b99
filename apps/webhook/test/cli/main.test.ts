// The `signet` command line as a user meets it: help, version, and one clear line for every
// mistake, never a stack trace.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueServingCertificate } from '../../src/certificates.js';
import type { CommandSpec } from '../../src/cli/flags.js';
import { COMMANDS, main } from '../../src/cli/main.js';

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
    expect(unknown.stderr).toContain('unknown command "vrify" (did you mean verify?)');
    const flag = await run('verify', 'x', '--polcy', policy);
    expect(flag.code).toBe(2);
    expect(oneLine(flag)).toBe('signet verify: unknown flag --polcy (did you mean --policy?)');
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
    // --context reaches the kubeconfig loader (migrate, audit and serve alike).
    for (const argv of [
      ['migrate', 'check'],
      ['audit', '--policy-file', policy],
      ['serve', '--tls-self-managed'],
    ]) {
      const other = await run(...argv, '--kubeconfig', kubeconfig, '--context', 'staging');
      expect(other.stderr, argv.join(' ')).toContain(`${kubeconfig}: no context named "staging"`);
    }
    const result = await run('migrate', 'check', '--kubeconfig', kubeconfig);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(
        `^signet migrate: cannot read the cluster: GET /apis/apiextensions\\.k8s\\.io/v1/customresourcedefinitions/\\S+: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\n$`,
      ),
    );
  });
});

describe('one grammar across commands', () => {
  const command = (name: string) => COMMANDS.find((c) => c.name === name) as CommandSpec;
  const flag = (name: string, spelling: string) =>
    command(name).flags.find(
      (f) => f.name === spelling || f.aliases?.includes(spelling) || f.deprecatedAliases?.includes(spelling),
    );

  it("-n is the namespace a command works on; Signet's own is --signet-namespace", () => {
    for (const c of COMMANDS) {
      const short = c.flags.find((f) => f.short === 'n');
      if (short !== undefined) expect(short.name, c.name).toBe('namespace');
      const named = c.flags.find((f) => f.name === 'namespace');
      if (named !== undefined) expect(named.short, c.name).toBe('n');
    }
    expect(flag('audit', 'namespace')?.short).toBe('n');
    expect(flag('verify', 'namespace')?.short).toBe('n');
    for (const name of ['serve', 'migrate', 'audit'])
      expect(flag(name, 'signet-namespace')?.name, name).toBe('signet-namespace');
    for (const name of ['serve', 'migrate'])
      expect(flag(name, 'namespace')?.deprecatedAliases, name).toEqual(['namespace']);
  });

  it('manifests are -f/--filename (alias --resource), output is -o, and --context goes with --kubeconfig', () => {
    for (const c of COMMANDS) {
      const manifests = c.flags.find((f) => f.name === 'filename');
      if (manifests) expect(manifests).toMatchObject({ short: 'f', aliases: ['resource'], multiple: true });
      const output = c.flags.find((f) => f.name === 'output');
      if (output) expect(output.short, c.name).toBe('o');
      if (c.flags.some((f) => f.name === 'kubeconfig'))
        expect(
          c.flags.some((f) => f.name === 'context'),
          c.name,
        ).toBe(true);
    }
    expect(['verify', 'audit'].every((name) => flag(name, 'filename') !== undefined)).toBe(true);
    expect(['verify', 'audit', 'migrate'].every((name) => flag(name, 'output') !== undefined)).toBe(true);
  });

  it('the old spelling still works, with a warning on stderr', async () => {
    const serve = await run('serve', '--namespace', 'ops', '--policy-file', policy);
    expect(serve.code).toBe(2);
    expect(serve.stderr.split('\n')[0]).toBe(
      'signet serve: warning: --namespace is deprecated; use --signet-namespace',
    );
    expect(serve.stderr).toContain('TLS is required');
  });

  it('one --output check, naming the formats of the command', async () => {
    expect((await run('verify', 'x', '--policy-file', policy, '-o', 'table')).stderr).toContain(
      'signet verify: --output must be text, json or yaml, got "table"',
    );
    expect((await run('audit', '-f', policy, '--policy-file', policy, '-o', 'text')).stderr).toContain(
      'signet audit: --output must be table, json or yaml, got "text"',
    );
    expect((await run('migrate', 'check', '-o', 'xml')).stderr).toContain(
      'signet migrate: --output must be text, json or yaml, got "xml"',
    );
  });
});

describe('hints name flags the command has', () => {
  const noCluster = { HOME: join(dir, 'no-home'), KUBECONFIG: '' };
  async function withoutCluster(...argv: string[]) {
    const saved = { HOME: process.env.HOME, KUBECONFIG: process.env.KUBECONFIG };
    Object.assign(process.env, noCluster);
    try {
      return await run(...argv);
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  }
  const flagsIn = (text: string) =>
    [...text.matchAll(/(?<![\w-])(--?[a-z][a-z-]*)/g)].map((m) => m[1] as string);
  const expectKnownFlags = (name: string, text: string) => {
    const command = COMMANDS.find((c) => c.name === name) as CommandSpec;
    const known = new Set(
      command.flags.flatMap((f) => [
        `--${f.name}`,
        ...(f.short ? [`-${f.short}`] : []),
        ...(f.aliases ?? []).map((a) => `--${a}`),
      ]),
    );
    for (const named of flagsIn(text)) expect(known.has(named), `${name} names ${named}: ${text}`).toBe(true);
  };

  it('migrate check without a cluster points to --kubeconfig only', async () => {
    const result = await withoutCluster('migrate', 'check');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'signet migrate: no cluster to talk to: give --kubeconfig, set KUBECONFIG, or run in a Pod with a ServiceAccount\n',
    );
    expectKnownFlags('migrate', result.stderr);
    const policyFile = await run('migrate', 'check', '--policy-file', policy);
    expect(policyFile.stderr).toContain(
      'signet migrate: unknown flag --policy-file (a flag of serve, verify and audit, not of migrate)',
    );
  });

  it('audit names what is missing, not what was given', async () => {
    const policies = await withoutCluster('audit', '--policy-file', policy);
    expect(policies.code).toBe(2);
    expect(policies.stderr).toMatch(/no cluster to talk to: .* \(or audit manifests instead: -f PATH\)\n$/);
    expectKnownFlags('audit', policies.stderr);
    const manifests = await withoutCluster('audit', '-f', policy);
    expect(manifests.stderr).toMatch(/\(or give the policies as files: --policy-file FILE\)\n$/);
    const neither = await withoutCluster('audit');
    expect(neither.stderr).toMatch(/\(or audit manifests without a cluster: -f PATH --policy-file FILE\)\n$/);
    for (const result of [manifests, neither]) expectKnownFlags('audit', result.stderr);
    const serve = await withoutCluster('serve', '--tls-self-managed');
    expect(serve.stderr).toMatch(/\(or run from policy files: --policy-file FILE\)\n$/);
    expectKnownFlags('serve', serve.stderr);
  });

  it('a mistyped action or shell gets a suggestion', async () => {
    expect((await run('migrate', 'chek')).stderr).toContain('got "chek" (did you mean check?)');
    expect((await run('completion', 'zhs')).stderr).toContain('got "zhs" (did you mean zsh?)');
  });
});

describe('signet verify against a server that answers plain HTTP', () => {
  it('exits 3 (could not be checked) and says the cause once, in words', async () => {
    const { createServer: createHttpServer } = await import('node:http');
    const server = createHttpServer((_, response) => response.writeHead(404).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const host = `127.0.0.1:${(server.address() as { port: number }).port}`;
    const keyless = join(dir, 'keyless.yaml');
    writeFileSync(
      keyless,
      'apiVersion: policy.sigstore.dev/v1beta1\nkind: ClusterImagePolicy\nmetadata: {name: signed}\nspec:\n  images: [{glob: "**"}]\n  authorities: [{keyless: {identities: [{issuer: https://issuer.example, subject: ci}]}}]\n',
    );
    try {
      const digest = `sha256:${'0'.repeat(64)}`;
      for (const image of [`${host}/app@${digest}`, `${host}/app:v1`]) {
        const result = await run('verify', image, '--policy-file', keyless);
        expect(result.code, result.stdout).toBe(3);
        expect(result.stdout).not.toMatch(/SSL routines|wrong version number|openssl/i);
        const said = result.stdout.split('answered plain HTTP to an HTTPS request').length - 1;
        expect(said, result.stdout).toBe(1);
        expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('DENIED (could not be checked)');
      }
    } finally {
      server.close();
    }
  });
});

describe("signet verify's exit code", () => {
  it('is 1 when an object is denied by policy, else 3 when one could not be checked, else 0', async () => {
    const { exitCodeOf } = await import('../../src/commands/verify.js');
    const admitted = { allowed: true, result: 'pass' as const };
    const warned = { allowed: true, result: 'infrastructure' as const };
    const failed = { allowed: false, result: 'fail' as const };
    const unchecked = { allowed: false, result: 'infrastructure' as const };
    expect(exitCodeOf([admitted, warned])).toBe(0);
    expect(exitCodeOf([admitted, unchecked])).toBe(3);
    expect(exitCodeOf([unchecked, failed])).toBe(1);
    expect(exitCodeOf([])).toBe(0);
  });
});
