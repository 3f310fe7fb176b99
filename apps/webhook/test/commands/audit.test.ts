// `signet audit -f` against a real registry and signatures made by the real cosign CLI: every
// object judged by the webhook's own path, running Pods by the digest their status says was
// pulled, a registry that is down reported as infrastructure, never as non-compliant. The cluster
// side (`--kubeconfig`) runs against a real API server in e2e/test/signet-audit.test.ts.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type * as Testbed from '@signet/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { main } from '../../src/cli/main.js';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

let group: Testbed.ProcessGroup | undefined;
let runDir = '';
let host = '';
let deadHost = '';
let signed = '';
let unsigned = '';
let warnImage = '';
let deadImage = '';
let bundled = '';
let policyFile = '';
let manifests = '';

const key = (publicKey: string) => `key:
        data: |
          ${publicKey}`;

beforeAll(async () => {
  const testbed = await import('@signet/testbed');
  const { crane } = await testbed.ensureTools(['crane', 'cosign', 'registry'], {
    onProgress: (event) => console.log(`testbed: ${event.message}`),
  });
  runDir = await testbed.createRunDir('signet-audit-cli-');
  group = new testbed.ProcessGroup({ runDir, graceMs: 2000 });
  const [registry, dead] = await Promise.all([
    testbed.startRegistry({ referrers: false, group }),
    testbed.startRegistry({ referrers: false, group }),
  ]);
  host = registry.host;
  deadHost = dead.host;
  const cosign = await testbed.createCosign({ workDir: runDir });
  const pair = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
  const push = async (r: Testbed.Registry, repo: string, tag: string) =>
    `${r.host}/${repo}@${await testbed.pushRandomImage(r, repo, tag, { crane, workDir: runDir })}`;
  [signed, unsigned, warnImage, deadImage] = await Promise.all([
    push(registry, 'team/app', 'v2'),
    push(registry, 'team/app', 'v1'),
    push(registry, 'warn/app', 'v1'),
    push(dead, 'dead/app', 'v1'),
  ]);
  await cosign.signLegacyKeyed(signed, pair);
  bundled = await push(registry, 'team/app', 'v3');
  await cosign.signBundleKeyed(bundled, pair);
  // `team/app:moving` names the signed image now; the Pod below pulled the unsigned one.
  await testbed.runCommand(crane, ['copy', '--insecure', signed, `${host}/team/app:moving`], {
    env: testbed.craneEnv(runDir),
    timeoutMs: 60_000,
  });
  await dead.process.stop();
  const publicKey = (await readFile(pair.publicKey, 'utf8')).trim().split('\n').join('\n          ');
  policyFile = join(runDir, 'policy.yaml');
  const policy = (name: string, glob: string, mode: string) => `apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: ${name} }
spec:
  mode: ${mode}
  images: [{ glob: "${glob}" }]
  authorities:
    - name: release-key
      ${key(publicKey)}
`;
  await writeFile(
    policyFile,
    [
      policy('release', `${host}/team/**`, 'enforce'),
      policy('soft', `${host}/warn/**`, 'warn'),
      policy('outage', `${deadHost}/dead/**`, 'enforce'),
    ].join('---\n'),
  );
  manifests = join(runDir, 'manifests');
  await mkdir(manifests);
  const labels = { app: 'web' };
  const template = (image: string) => ({
    metadata: { labels },
    spec: { containers: [{ name: 'app', image }] },
  });
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'shop', uid: 'd-1' },
    spec: { selector: { matchLabels: labels }, template: template(`${host}/team/app:v2`) },
  };
  const owner = (kind: string, name: string, uid: string) => [
    { apiVersion: 'apps/v1', kind, name, uid, controller: true },
  ];
  const replicaSet = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: 'web-1',
      namespace: 'shop',
      uid: 'rs-1',
      ownerReferences: owner('Deployment', 'web', 'd-1'),
    },
    spec: { selector: { matchLabels: labels }, template: template(signed) },
  };
  const pod = (name: string, image: string, extra: object = {}) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'shop', ...extra },
    spec: { containers: [{ name: 'app', image }] },
  });
  const moved = {
    ...pod('web-1-abc', `${host}/team/app:moving`, { ownerReferences: owner('ReplicaSet', 'web-1', 'rs-1') }),
    status: {
      phase: 'Running',
      containerStatuses: [
        { name: 'app', image: `${host}/team/app:moving`, imageID: `docker-pullable://${unsigned}` },
      ],
    },
  };
  const finished = { ...pod('done', unsigned), status: { phase: 'Succeeded' } };
  await writeFile(
    join(manifests, 'workloads.yaml'),
    [deployment, replicaSet, moved, finished, pod('legacy', unsigned), pod('soft', warnImage)]
      .map((o) => stringify(o))
      .join('---\n'),
  );
  await writeFile(join(manifests, 'outage.json'), JSON.stringify(pod('outage', deadImage)));
  await writeFile(join(manifests, 'config.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: c }\n');
  await writeFile(join(manifests, 'notes.txt'), 'not a manifest');
}, 30 * 60_000);

afterAll(async () => {
  await group?.stopAll();
  if (runDir) await rm(runDir, { recursive: true, force: true });
});

async function audit(...args: string[]) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main(['audit', ...args, '--insecure-registry', host, '--insecure-registry', deadHost], {
    stdout,
    stderr,
  });
  return { code, out: stdout.text, err: stderr.text };
}

interface Json {
  objects: {
    kind: string;
    name: string;
    owner: { kind: string; name: string };
    result: string;
    findings: Record<string, string>[];
  }[];
  summary: Record<string, number>;
}

describe('signet audit -f', () => {
  it('judges workloads by their templates and running Pods by their pulled digests (JSON)', async () => {
    const { code, out, err } = await audit('-f', manifests, '--policy-file', policyFile, '-o', 'json', '-q');
    expect(err).toBe('');
    expect(code).toBe(1);
    const report = JSON.parse(out) as Json;
    const byName = new Map(report.objects.map((o) => [o.name, o]));
    // The ReplicaSet is covered by its Deployment and Pods; the finished Pod runs nothing.
    expect([...byName.keys()].sort()).toEqual(['legacy', 'outage', 'soft', 'web', 'web-1-abc']);
    expect(byName.get('web')).toMatchObject({
      result: 'pass',
      findings: [{ policy: 'release', result: 'pass' }],
    });
    expect(byName.get('web')?.findings[0]?.image).toMatch(new RegExp(`^${host}/team/app:v2@sha256:`));
    expect(byName.get('web-1-abc')).toMatchObject({
      owner: { kind: 'Deployment', name: 'web' },
      result: 'fail',
      findings: [
        {
          image: `${host}/team/app@${unsigned.split('@')[1]}`,
          specImage: `${host}/team/app:moving`,
          policy: 'release',
          result: 'fail',
          reason: 'no signature found',
        },
      ],
    });
    expect(byName.get('legacy')?.result).toBe('fail');
    expect(byName.get('soft')).toMatchObject({
      result: 'warn',
      findings: [{ policy: 'soft', result: 'warn' }],
    });
    expect(byName.get('outage')).toMatchObject({
      result: 'infrastructure',
      findings: [{ policy: 'outage' }],
    });
    expect(report.summary).toEqual({ pass: 1, fail: 2, warn: 1, infrastructure: 1 });
  });

  it('prints the table with progress on stderr, and YAML', async () => {
    const table = await audit('-f', join(manifests, 'workloads.yaml'), '--policy-file', policyFile);
    expect(table.code).toBe(1);
    expect(table.err).toMatch(/^audit: 4\/4 objects, \d+ images verified, \d+ cache hits$/m);
    const lines = table.out.split('\n');
    expect(lines[0]).toBe('NAMESPACE shop');
    expect(lines[1]).toMatch(/^WORKLOAD\s+OBJECT\s+IMAGE\s+POLICY\s+RESULT\s+NEXT POD\s+REASON$/);
    expect(lines[2]).toMatch(
      /^Deployment\/web\s+Deployment\/web\s+\S+:v2@sha256:[0-9a-f]{12}\s+release\s+pass\s+admitted\s/,
    );
    expect(lines[3]).toMatch(
      /^\s+Pod\/web-1-abc\s+.*\(spec: \S+:moving\)\s+release\s+fail\s+no signature found$/,
    );
    expect(lines.at(-3)).toBe('4 objects: 1 pass, 2 fail, 1 warn, 0 infrastructure (2 would be denied)');
    expect(lines.at(-2)).toMatch(
      /^next Pod of \d+ workloads \(a drain, an eviction\): \d+ admitted, 0 only on a verification record, \d+ denied$/,
    );
    const yaml = await audit(
      '-f',
      join(manifests, 'outage.json'),
      '--policy-file',
      policyFile,
      '-o',
      'yaml',
      '-q',
    );
    expect(yaml.code).toBe(3);
    expect((parse(yaml.out) as Json).summary).toEqual({ pass: 0, fail: 0, warn: 0, infrastructure: 1 });
  });

  it('exits 0 when nothing would be denied', async () => {
    const only = join(runDir, 'only-signed.yaml');
    await writeFile(
      only,
      stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: { containers: [{ name: 'a', image: signed }] },
      }),
    );
    expect((await audit('-f', only, '--policy-file', policyFile, '-q')).code).toBe(0);
  });

  it("passes cosign 3's default bundle under a policy that names no format, and not with --signature-format-default=legacy", async () => {
    const file = join(runDir, 'bundled.yaml');
    await writeFile(
      file,
      stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'b', namespace: 'shop' },
        spec: { containers: [{ name: 'a', image: bundled }] },
      }),
    );
    expect((await audit('-f', file, '--policy-file', policyFile, '-q')).code).toBe(0);
    const upstream = await audit(
      '-f',
      file,
      '--policy-file',
      policyFile,
      '-q',
      '-o',
      'json',
      '--signature-format-default',
      'legacy',
    );
    expect(upstream.code).toBe(1);
    expect(upstream.out).toContain('which this authority does not read');
  });

  it.each([
    [
      ['--signature-format-default', 'legacy,notation'],
      '--signature-format-default must be signature formats separated by commas, each once (legacy, bundle), got "legacy,notation"',
    ],
    [['--output', 'xml'], '--output must be table, json or yaml, got "xml"'],
    [['--concurrency', '0'], '--concurrency must be a whole number from 1 to 256, got "0"'],
    [['--timeout', 'soon'], '--timeout must be a duration like 30s, got "soon"'],
    [['-n', 'shop'], '--namespace and --opted-in-only read a cluster; -f audits manifests'],
  ])('refuses %j with one line (exit 2)', async (args, message) => {
    const result = await audit('-f', manifests, '--policy-file', policyFile, ...args);
    expect(result.code).toBe(2);
    expect(result.err.split('\n')[0]).toBe(`signet audit: ${message}`);
  });

  it('says which manifest cannot be read', async () => {
    const bad = join(runDir, 'bad.yaml');
    await writeFile(bad, 'kind: [');
    const result = await audit('-f', bad, '--policy-file', policyFile);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(new RegExp(`^signet audit: ${bad}: document 1: `));
    const empty = join(runDir, 'empty.yaml');
    await writeFile(empty, '');
    expect((await audit('-f', empty, '--policy-file', policyFile)).err).toMatch(/no objects/);
  });
});
