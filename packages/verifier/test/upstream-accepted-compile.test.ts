// Every ClusterImagePolicy and TrustRoot that policy-controller v0.15.1 accepts in its own test
// data, examples and e2e scripts (read from its Go module at test time) compiles in Signet, with
// every signer authority ready to verify. Templates are filled as upstream's e2e scripts fill them
// (`sed s@PLACEHOLDER@...@`, `yq ... load_str("cosign.pub")`), with real material: a mock Sigstore's
// CA, logs and TSA, a TUF repository made by python-tuf (packed into `mirrorFS`, or served on
// loopback for `remote`). What stands in: Secrets and KMS keys (any name gives a test public key;
// the KMS clients are @signet/kms's tests) and ConfigMaps (the ones upstream's scripts create).
// Named exceptions, each with the reason, are the only files that do not compile.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  type ClusterImagePolicy,
  parseClusterImagePolicy,
  parseTrustRoot,
  type TrustRoot,
} from '@signet/k8s-types';
import { createPolicyEngines, type PolicyEngines } from '@signet/policy-engines';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type CompileContext, compileAuthorities } from '../src/policy/compile.js';
import { compileTrustRoot, trustRootResolver } from '../src/trust/compile.js';
import type { CompiledTrustRoot } from '../src/trust/trusted-root.js';
import { ecKeyPair, type Infra, makeInfra, publicPem } from './support/fixtures.js';
import { loadTestbed, type Testbed } from './support/registry-helpers.js';

const DIRECTORIES = [
  'test/testdata/policy-controller/valid',
  'test/testdata/policy-controller/e2e',
  'test/testdata/policy-controller/tester',
  'test/testdata/policy-controller/empty-authorities',
  'test/testdata/trustroot/valid',
  'test/testdata/trustroot/e2e',
  'examples/policies',
];

/** What does not compile, and why: each one upstream refuses too, or cannot be had here. */
const EXCEPTIONS: Readonly<Record<string, { readonly code: string; readonly why: string }>> = {
  'examples/policies/signed-by-aws-kms-key.yaml': {
    code: 'PolicyParseError',
    why: 'a template: `awskms:///arn:aws:kms:<< region >>:...` is no KMS URI until filled in, and upstream refuses it as written',
  },
  'test/testdata/policy-controller/e2e/cip-policy-from-url.yaml': {
    code: 'REMOTE_POLICY_FAILED',
    why: 'its remote policy lives on a public gist, pinned by sha256sum, and there is no network here; test/upstream-policies.test.ts fetches the same kind of policy from a loopback server',
  },
};

interface Found {
  readonly file: string;
  readonly kind: 'ClusterImagePolicy' | 'TrustRoot';
  readonly body: unknown;
}

/** The ClusterImagePolicies and TrustRoots of upstream's YAML files, placeholders filled. */
async function objectsInFiles(upstream: string, fill: (text: string) => string): Promise<Found[]> {
  const found: Found[] = [];
  for (const directory of DIRECTORIES) {
    const names = (await readdir(join(upstream, directory))).filter((n) => /\.ya?ml$/.test(n)).sort();
    for (const name of names) {
      const file = `${directory}/${name}`;
      const text = fill(await readFile(join(upstream, file), 'utf8'));
      for (const document of parseAllDocuments(text)) {
        const body = document.toJS() as { kind?: string } | null;
        if (body?.kind === 'ClusterImagePolicy' || body?.kind === 'TrustRoot')
          found.push({ file, kind: body.kind, body });
      }
    }
  }
  return found;
}

/**
 * The policies upstream's e2e scripts apply inline (`kubectl apply -f - <<EOF ... EOF`), and the
 * ConfigMaps they create (`kubectl create -n NS configmap NAME --from-file=KEY=PATH`), into `configMaps`.
 */
async function objectsInScripts(
  upstream: string,
  configMaps: Map<string, Record<string, string>>,
): Promise<Found[]> {
  const found: Found[] = [];
  for (const script of (await readdir(join(upstream, 'test'))).filter((n) => n.endsWith('.sh')).sort()) {
    const text = await readFile(join(upstream, 'test', script), 'utf8');
    for (const m of text.matchAll(/kubectl apply -f - <<EOF\n([\s\S]*?)\nEOF/g)) {
      const body = parseAllDocuments(m[1] ?? '')[0]?.toJS() as { kind?: string } | null;
      if (body?.kind === 'ClusterImagePolicy') found.push({ file: `test/${script}`, kind: body.kind, body });
    }
    for (const c of text.matchAll(/kubectl create -n (\S+) configmap (\S+) --from-file=(\S+)=\.\/(\S+)/g)) {
      const [, namespace, cmName, key, path] = c as unknown as [string, string, string, string, string];
      const data = configMaps.get(`${namespace}/${cmName}`) ?? {};
      data[key] = await readFile(join(upstream, path), 'utf8');
      configMaps.set(`${namespace}/${cmName}`, data);
    }
  }
  return found;
}

/** What went wrong, by code when the error has one. */
function outcomeOf(error: unknown): string {
  return `${(error as { code?: string }).code ?? (error as Error).name}: ${(error as Error).message}`;
}

/** Every combination of one compiled root per name (upstream's scripts apply one TrustRoot per run). */
function rootVariants(compiledRoots: readonly CompiledTrustRoot[]): CompiledTrustRoot[][] {
  const byName = new Map<string, CompiledTrustRoot[]>();
  for (const root of compiledRoots) byName.set(root.name, [...(byName.get(root.name) ?? []), root]);
  return [...byName.values()].reduce<CompiledTrustRoot[][]>(
    (sets, roots) => sets.flatMap((set) => roots.map((root) => [...set, root])),
    [[]],
  );
}

/** `ok`, or which authorities are unavailable, or why it did not compile, with the first set of roots that works. */
async function compileOutcome(
  cip: ClusterImagePolicy,
  variants: readonly CompiledTrustRoot[][],
  contextWith: (roots: CompiledTrustRoot[]) => CompileContext,
): Promise<string> {
  let outcome = '';
  for (const roots of variants) {
    try {
      const compiled = await compileAuthorities(cip, contextWith(roots));
      const unavailable = compiled.authorities.flatMap((a) =>
        a.type !== 'static' && a.state.kind === 'unavailable' ? [`${a.name}: ${a.state.reason.message}`] : [],
      );
      outcome = unavailable.length === 0 ? 'ok' : `unavailable: ${unavailable.join('; ')}`;
    } catch (error) {
      outcome = `${(error as { code?: string }).code}: ${(error as Error).message}`;
    }
    if (outcome === 'ok') break;
  }
  return outcome;
}

describe('every policy and TrustRoot policy-controller v0.15.1 accepts compiles in Signet', () => {
  let testbed: typeof Testbed;
  let upstream = '';
  let dir = '';
  let infra: Infra;
  let engines: PolicyEngines;
  let mirror: Testbed.TufMirror | undefined;
  const found: Found[] = [];
  const placeholders = new Map<string, string>();
  const configMaps = new Map<string, Record<string, string>>();
  const cosignPub = publicPem(ecKeyPair());
  let caPem = '';

  const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');
  const pem = (der: Uint8Array, label = 'CERTIFICATE') =>
    `-----BEGIN ${label}-----\n${Buffer.from(der)
      .toString('base64')
      .match(/.{1,64}/g)
      ?.join('\n')}\n-----END ${label}-----\n`;

  beforeAll(async () => {
    testbed = await loadTestbed();
    upstream = await testbed.policyControllerModule();
    infra = await makeInfra();
    engines = createPolicyEngines();
    dir = await mkdtemp(join(tmpdir(), 'signet-upstream-accepted-'));
    // A TUF repository with the mock Sigstore's trusted root: packed for `repository`, served for `remote`.
    const repository = await testbed.TufRepository.create(join(dir, 'repository'), {
      'trusted_root.json': Buffer.from(JSON.stringify(infra.trustedRootJSON)),
    });
    await promisify(execFile)('tar', ['-C', dir, '-czf', join(dir, 'repository.tgz'), 'repository'], {
      timeout: 30_000,
    });
    mirror = await new testbed.TufMirror(join(dir, 'repository')).start();
    const rootJson = b64(await repository.initialRoot());
    // The values upstream's e2e scripts put in place of each placeholder, from the mock Sigstore.
    const der = (view: ArrayBufferView) => Buffer.from(view.buffer, view.byteOffset, view.byteLength);
    caPem = pem(der(infra.ca.rootCertificate));
    const tsaChain = [infra.tsa.intCertificate, infra.tsa.rootCertificate].map((c) => pem(der(c))).join('');
    for (const [name, value] of Object.entries({
      ROOT_JSON: rootJson,
      REPOSITORY: (await readFile(join(dir, 'repository.tgz'))).toString('base64'),
      TUF_MIRROR: mirror.url,
      FULCIO_CERT_CHAIN: b64(caPem),
      REKOR_PUBLIC_KEY: b64(publicPem(infra.keys.tlog)),
      CTFE_PUBLIC_KEY: b64(publicPem(infra.keys.ctlog)),
      TSA_CERT_CHAIN: b64(tsaChain),
      TSA_URL: 'https://tsa.example.test/api/v1/timestamp',
    })) {
      placeholders.set(name, value);
    }
    const fill = (text: string) => {
      let filled = text;
      for (const [name, value] of placeholders) filled = filled.replaceAll(name, value);
      return filled;
    };
    found.push(...(await objectsInFiles(upstream, fill)));
    found.push(...(await objectsInScripts(upstream, configMaps)));
  }, 10 * 60_000);

  afterAll(async () => {
    await engines?.close();
    await mirror?.stop();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('finds the upstream material', () => {
    const files = new Set(found.map((f) => f.file));
    expect(found.filter((f) => f.kind === 'ClusterImagePolicy').length).toBeGreaterThanOrEqual(60);
    expect(found.filter((f) => f.kind === 'TrustRoot').length).toBe(5);
    for (const file of Object.keys(EXCEPTIONS)) expect(files).toContain(file);
    expect(files).toContain('test/e2e_test_cluster_image_policy_with_oci11_attestations.sh');
  });

  it('compiles them all, every signer authority ready, the named exceptions aside', async () => {
    const trustRoots: TrustRoot[] = [];
    const compiledRoots: CompiledTrustRoot[] = [];
    const outcomes = new Map<string, string>();
    const note = (file: string, outcome: string) => {
      const before = outcomes.get(file);
      // A file is as good as its worst document.
      if (before === undefined || before === 'ok') outcomes.set(file, outcome);
    };
    for (const { file, body } of found.filter((f) => f.kind === 'TrustRoot')) {
      try {
        const trustRoot = parseTrustRoot(body);
        // The mirror runs on loopback: listed as an operator would (--private-host).
        const privateHosts = mirror === undefined ? [] : [new URL(mirror.url).host];
        compiledRoots.push(await compileTrustRoot(trustRoot, { privateHosts }));
        trustRoots.push(trustRoot);
        note(file, 'ok');
      } catch (error) {
        note(file, outcomeOf(error));
      }
    }
    // Upstream's scripts apply one TrustRoot per run, and two of its files share a name
    // (`my-sigstore-keys`: with a CA and logs, or with a TSA only): a policy compiles when it does
    // with one of them, as in the script that applies it.
    const variants = rootVariants(compiledRoots);
    const contextWith = (roots: CompiledTrustRoot[]): CompileContext => ({
      trustRoots: trustRootResolver(roots),
      engines,
      // The Secrets the policies name: the keyless CA's certificate, or a cosign public key.
      lookupSecret: (_, name) =>
        name === 'ca-cert-secret'
          ? { 'ca.crt': Buffer.from(caPem) }
          : { 'cosign.pub': Buffer.from(cosignPub) },
      lookupConfigMap: (namespace, name) => configMaps.get(`${namespace}/${name}`),
      kmsKeys: {
        lookup: async () => ({
          kind: 'ready',
          key: { pem: cosignPub },
          fetchedAt: new Date(),
          stale: undefined,
        }),
      },
      fetchRemotePolicy: async (url) => {
        throw new Error(`no network here for ${url}`);
      },
    });
    for (const { file, body } of found.filter((f) => f.kind === 'ClusterImagePolicy')) {
      let cip: ClusterImagePolicy;
      try {
        // upstream's e2e scripts turn fail-on-empty-authorities off for these.
        cip = parseClusterImagePolicy(withKeyData(body), {
          failOnEmptyAuthorities: !file.includes('/empty-authorities/'),
        });
      } catch (error) {
        note(file, `${(error as Error).name}: ${(error as Error).message}`);
        continue;
      }
      const outcome = await compileOutcome(cip, variants, contextWith);
      note(file, outcome);
    }
    const failed = [...outcomes].filter(([, outcome]) => outcome !== 'ok');
    for (const [file, outcome] of failed) console.log(`${file}: ${outcome}`);
    expect(Object.fromEntries(failed.map(([file, outcome]) => [file, outcome.split(':')[0]]))).toEqual(
      Object.fromEntries(Object.entries(EXCEPTIONS).map(([file, { code }]) => [file, code])),
    );
    console.log(
      `upstream material compiled: ${outcomes.size - failed.length} of ${outcomes.size} files (${found.length} objects)`,
    );
  });

  /** `yq '.spec.authorities[0].key.data |= load_str("cosign.pub")'`: an empty key gets the test key. */
  function withKeyData(body: unknown): unknown {
    const cip = body as { spec?: { authorities?: { key?: { data?: unknown } }[] } };
    for (const authority of cip.spec?.authorities ?? []) {
      if (authority.key !== undefined && authority.key.data === '') authority.key.data = cosignPub;
    }
    return body;
  }
});
