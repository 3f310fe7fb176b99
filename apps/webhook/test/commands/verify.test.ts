// `signet verify` against a real registry and signatures made by the real cosign CLI: the same
// decision path as the webhook (mutate, apply the patch, validate).
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type * as Testbed from '@signet/testbed';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
let signedTag = '';
let signedDigest = '';
let unsigned = '';
let bundled = '';
let policyFile = '';

beforeAll(async () => {
  const testbed = await import('@signet/testbed');
  const { crane } = await testbed.ensureTools(['crane', 'cosign', 'registry'], {
    onProgress: (event) => console.log(`testbed: ${event.message}`),
  });
  runDir = await testbed.createRunDir('signet-verify-cli-');
  group = new testbed.ProcessGroup({ runDir, graceMs: 2000 });
  const registry = await testbed.startRegistry({ referrers: false, group });
  host = registry.host;
  const cosign = await testbed.createCosign({ workDir: runDir });
  const key = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
  signedDigest = await testbed.pushRandomImage(registry, 'team/app', 'v2', { crane, workDir: runDir });
  signedTag = `${host}/team/app:v2`;
  unsigned = `${host}/team/app@${await testbed.pushRandomImage(registry, 'team/app', 'v1', { crane, workDir: runDir })}`;
  await cosign.signLegacyKeyed(`${host}/team/app@${signedDigest}`, key);
  // cosign 3's default format: a Sigstore bundle (here in the fallback tag: distribution has no referrers API).
  bundled = `${host}/team/app@${await testbed.pushRandomImage(registry, 'team/app', 'v3', { crane, workDir: runDir })}`;
  await cosign.signBundleKeyed(bundled, key);
  const publicKey = (await readFile(key.publicKey, 'utf8')).trim().split('\n').join('\n          ');
  policyFile = join(runDir, 'policy.yaml');
  await writeFile(
    policyFile,
    `apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: { name: release }
spec:
  images: [{ glob: "${host}/team/**" }]
  authorities:
    - name: release-key
      key:
        data: |
          ${publicKey}
`,
  );
}, 30 * 60_000);

afterAll(async () => {
  await group?.stopAll();
  if (runDir) await rm(runDir, { recursive: true, force: true });
});

async function verify(...args: string[]) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main(['verify', ...args, '--insecure-registry', host], { stdout, stderr });
  return { code, out: stdout.text, err: stderr.text };
}

describe('signet verify IMAGE', () => {
  it('admits a signed tag, pinned to the digest it points at, with who signed it', async () => {
    const result = await verify(signedTag, '--policy', policyFile);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toContain(`pinned spec.containers[0].image to ${signedTag}@${signedDigest}`);
    expect(result.out).toContain('PASS policy "release" (enforce)');
    expect(result.out).toMatch(/authority "release-key": pass, 1 of 1 verified, signed by key release-key/);
    expect(result.out.trimEnd().split('\n').at(-1)).toBe('ADMITTED');
  });

  it("denies an unsigned image (exit 1), saying why once; the JSON has the webhook's own deny line", async () => {
    const result = await verify(unsigned, '--policy-file', policyFile);
    expect(result.code).toBe(1);
    expect(result.out).toContain('FAIL policy "release" (enforce)');
    expect(result.out).toContain('authority "release-key": fail: no signature found');
    expect(result.out.split('no signature found')).toHaveLength(2);
    expect(result.out.trimEnd().split('\n').at(-1)).toBe('DENIED');
    const json = await verify(unsigned, '--policy-file', policyFile, '-o', 'json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.out).objects[0]).toMatchObject({
      result: 'fail',
      denials: [`spec.containers[0].image ${unsigned}: policy "release" (enforce): no signature found`],
    });
  });

  it("admits cosign 3's default bundle under a policy that names no format; --signature-format-default=legacy denies it as policy-controller does, saying where it is", async () => {
    const either = await verify(bundled, '--policy-file', policyFile);
    expect(either.code, either.out).toBe(0);
    expect(either.out).toMatch(/authority "release-key": pass, 1 of 1 verified, signed by key release-key/);
    const upstream = await verify(bundled, '--policy-file', policyFile, '--signature-format-default=legacy');
    expect(upstream.code).toBe(1);
    expect(upstream.out).toContain(
      'authority "release-key": fail: no signature found in the legacy .sig/.att tags (the default signature format); the image has 1 Sigstore bundle (what cosign 3 writes by default), which this authority does not read',
    );
    const wrong = await verify(bundled, '--policy-file', policyFile, '--signature-format-default=notation');
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain('--signature-format-default must be signature formats separated by commas');
  });

  it('exits 3 when the registry cannot be read: plain HTTP without --insecure-registry, or down', async () => {
    const stdout = new Capture();
    const stderr = new Capture();
    const code = await main(['verify', signedTag, '--policy-file', policyFile], { stdout, stderr });
    expect(code).toBe(3);
    expect(stdout.text).toContain(
      `cannot pin ${signedTag} to a digest: registry ${host} repository team/app: ${host} answered plain HTTP`,
    );
    expect(stdout.text.split('answered plain HTTP')).toHaveLength(2);
    expect(stdout.text).not.toMatch(/SSL routines|wrong version number/);
    expect(stdout.text.trimEnd().split('\n').at(-1)).toBe('DENIED (could not be checked)');
    const digest = await verify(`${host}/team/app@${signedDigest}`, '--policy-file', policyFile);
    expect(digest.code).toBe(0);
    const { createServer } = await import('node:net');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadHost = `127.0.0.1:${(closed.address() as { port: number }).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const deadPolicy = join(runDir, 'dead-policy.yaml');
    await writeFile(
      deadPolicy,
      (await readFile(policyFile, 'utf8')).replace(`${host}/team/**`, `${deadHost}/team/**`),
    );
    const dead = await main(
      [
        'verify',
        `${deadHost}/team/app@${signedDigest}`,
        '--policy-file',
        deadPolicy,
        '--insecure-registry',
        deadHost,
      ],
      { stdout: new Capture(), stderr: new Capture() },
    );
    expect(dead).toBe(3);
  });

  it('denies an image no policy matches, as no-match-policy says', async () => {
    const result = await verify('registry.example/other:v1', '--policy-file', policyFile);
    expect(result.code).toBe(1);
    expect(result.out).toContain('no ClusterImagePolicy matches (no-match-policy: deny)');
  });
});

describe('signet verify --resource', () => {
  it('judges every workload of a manifest and reports JSON', async () => {
    const manifest = join(runDir, 'app.yaml');
    await writeFile(
      manifest,
      `apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: shop }
spec:
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      containers:
        - { name: app, image: "${signedTag}" }
        - { name: sidecar, image: "${unsigned}" }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: settings }
data: { a: b }
---
apiVersion: v1
kind: Pod
metadata: { name: ok }
spec:
  containers: [{ name: app, image: "${signedTag}" }]
`,
    );
    const result = await verify('--resource', manifest, '--policy-file', policyFile, '--output', 'json');
    expect(result.code).toBe(1);
    const report = JSON.parse(result.out);
    expect(report.allowed).toBe(false);
    expect(report.objects.map((o: { kind: string; name: string }) => `${o.kind}/${o.name}`)).toEqual([
      'Deployment/web',
      'Pod/ok',
    ]);
    const [web, pod] = report.objects;
    expect(web).toMatchObject({ namespace: 'shop', allowed: false, rule: 'policy' });
    expect(web.pinned).toEqual({
      'spec.template.spec.containers[0].image': `${signedTag}@${signedDigest}`,
    });
    expect(web.denials).toEqual([
      `spec.template.spec.containers[1].image ${unsigned}: policy "release" (enforce): no signature found`,
    ]);
    expect(web.images.map((i: { path: string }) => i.path)).toEqual([
      'spec.template.spec.containers[0].image',
      'spec.template.spec.containers[1].image',
    ]);
    expect(web.images[0].policies[0]).toMatchObject({
      policy: 'release',
      passed: true,
      authorities: [{ authority: 'release-key', passed: true, counts: { found: 1, verified: 1 } }],
    });
    expect(pod).toMatchObject({ namespace: 'default', allowed: true });
  });

  it('refuses an IMAGE together with --resource, and a manifest without objects', async () => {
    expect((await verify(signedTag, '--resource', policyFile, '--policy-file', policyFile)).code).toBe(2);
    const empty = join(runDir, 'empty.yaml');
    await writeFile(empty, '---\n');
    const none = await verify('--resource', empty, '--policy-file', policyFile);
    expect(none).toMatchObject({ code: 2, err: `signet verify: ${empty}: no objects\n` });
  });

  it('reports on stderr what it waits for while a registry is slow', async () => {
    // A slow front for the real registry: each request waits 3.5 s, then is passed on.
    const { createServer } = await import('node:http');
    const front = createServer(async (request, response) => {
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      const upstream = await fetch(`http://${host}${request.url}`, {
        method: request.method ?? 'GET',
        headers: { accept: String(request.headers.accept ?? '*/*') },
      });
      response.writeHead(upstream.status, Object.fromEntries(upstream.headers));
      response.end(Buffer.from(await upstream.arrayBuffer()));
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    const frontHost = `127.0.0.1:${(front.address() as { port: number }).port}`;
    try {
      const stdout = new Capture();
      const stderr = new Capture();
      const image = `${frontHost}/team/app@${signedDigest}`;
      const frontPolicy = join(runDir, 'front-policy.yaml');
      await writeFile(
        frontPolicy,
        (await readFile(policyFile, 'utf8')).replace(`${host}/team/**`, `${frontHost}/team/**`),
      );
      const args = ['verify', image, '--policy', frontPolicy, '--insecure-registry', frontHost];
      const code = await main(args, { stdout, stderr });
      expect(code).toBe(0);
      expect(stderr.text).toMatch(
        new RegExp(`^waiting for the registry: GET ${frontHost}/v2/team/app/manifests/`, 'm'),
      );
      expect(stderr.text).toMatch(/, 3s so far$/m);
    } finally {
      front.closeAllConnections();
      front.close();
    }
  }, 30_000);

  it('refuses an unknown cloud credential provider', async () => {
    const result = await verify(signedTag, '--policy', policyFile, '--cloud-credentials', 'aws');
    expect(result.code).toBe(2);
    expect(result.err).toContain('--cloud-credentials takes ecr, gcp, acr, got "aws"');
  });
});
