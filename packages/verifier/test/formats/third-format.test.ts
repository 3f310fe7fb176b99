// A third signature format, added as a format is added: one definition (this file stands in for
// `src/formats/<name>.ts`) and one registration (`SIGNATURE_FORMATS.with(...)`, a line in
// `src/formats/index.ts`). Nothing else in the verifier or the registry client knows its name.
// Its artifacts live as referrers of an artifact type of their own, as Notation's do; their
// content here is a Sigstore bundle made by the real cosign, so that they verify too. Against a
// real OCI 1.1 registry from the testbed, it is discovered (a real referrers request), it counts
// for an authority that reads it, and an authority that reads another format is told it is there.
import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseReference } from '@signet/core';
import type { ClusterImagePolicy } from '@signet/k8s-types';
import { dispatchFetch, RegistryClient } from '@signet/registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodingOf, type FormatQuery, type SignatureFormat } from '../../src/formats/format.js';
import { SIGNATURE_FORMATS, type SignatureFormats } from '../../src/formats/index.js';
import { ImageVerifier } from '../../src/image-verifier.js';
import { compileAuthorities } from '../../src/policy/compile.js';
import { clusterImagePolicy } from '../support/policies.js';
import { ensureTestTools, loadTestbed, type Testbed } from '../support/registry-helpers.js';

const SETUP_TIMEOUT = 30 * 60_000;
const TOY_TYPE = 'application/vnd.example.toy.signature.v1+json';
const BUNDLE_LAYER = 'application/vnd.dev.sigstore.bundle';

// The format: where its artifacts are, what they are to the signature layer, what counts, and
// how to say that an image has some.
const TOY_SIGNATURES: FormatQuery = {
  query: {
    kind: 'referrers',
    artifactType: { equals: TOY_TYPE },
    confirmedAs: 'toy signature',
    layers: { pick: 'one', mediaTypePrefix: BUNDLE_LAYER, name: 'toy' },
  },
  encoding: 'bundle',
  read: ({ source, bytes, artifactType }) => ({
    format: 'bundle',
    source,
    bundle: bytes,
    artifactType,
    predicateType: undefined,
  }),
};

const toyFormat: SignatureFormat = {
  name: 'toy',
  queries: (evidence) => (evidence === 'signatures' ? [TOY_SIGNATURES] : []),
  counts: (artifact, evidence) => evidence === 'signatures' && encodingOf(artifact) === 'bundle',
  searched: () => 'as a toy signature',
  found: (noun, count) =>
    `${count} toy ${noun}${count === 1 ? '' : 's'}, which count only with signatureFormat: toy`,
};

// The registration.
const formats: SignatureFormats = SIGNATURE_FORMATS.with(toyFormat);

describe('a third signature format, registered in one place', () => {
  let testbed: typeof Testbed;
  let group: Testbed.ProcessGroup | undefined;
  let runDir = '';
  let oci: Testbed.Registry;
  let publicKey = '';
  let image = '';
  const requests: string[] = [];
  let registry: RegistryClient;

  beforeAll(async () => {
    testbed = await loadTestbed();
    const { crane } = await ensureTestTools(testbed, ['crane', 'cosign', 'oci-registry']);
    runDir = await testbed.createRunDir('signet-verifier-formats-');
    group = new testbed.ProcessGroup({ runDir, graceMs: 2_000 });
    oci = await testbed.startRegistry({ referrers: true, group });
    const cosign = await testbed.createCosign({ workDir: runDir });
    const key = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
    publicKey = await readFile(key.publicKey, 'utf8');
    const digest = await testbed.pushRandomImage(oci, 'team/app', 'v1', { crane, workDir: runDir });
    image = `${oci.host}/team/app@${digest}`;
    // cosign writes its bundle as a Sigstore bundle referrer; the same bundle is then attached
    // again under the toy artifact type, as a toy signer would attach it.
    await cosign.signBundleKeyed(image, key);
    await attachAsToy(oci, 'team/app', digest);
    registry = new RegistryClient({
      insecureHosts: [oci.host],
      fetch: (url, init) => {
        requests.push(`${init.method ?? 'GET'} ${url.pathname}`);
        return dispatchFetch(url, init);
      },
    });
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await group?.stopAll();
    if (runDir !== '' && !process.env.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
  });

  async function verify(authority: Record<string, unknown>, registered?: SignatureFormats) {
    const cip = clusterImagePolicy([{ name: 'release-key', key: { data: publicKey }, ...authority }], {
      images: [{ glob: '**' }],
    });
    return verifyPolicy(cip, registered);
  }

  async function verifyPolicy(cip: ClusterImagePolicy, registered?: SignatureFormats) {
    const revision = `release@${Math.random()}`;
    const formats = registered === undefined ? {} : { formats: registered };
    const policy = await compileAuthorities(cip, { ...formats, revision: () => revision });
    requests.length = 0;
    const result = await new ImageVerifier({ registry }).verifyImage(
      { reference: parseReference(image), policies: [policy] },
      { signal: AbortSignal.timeout(20_000), deadline: Date.now() + 20_000 },
    );
    const [check] = result.checks;
    if (check === undefined) throw new Error('no check');
    return check;
  }

  it('discovers the toy artifacts, and they count for an authority that reads the format', async () => {
    // The parser knows `legacy` and `bundle` only; compile dispatches on whatever name it is given.
    const parsed = clusterImagePolicy([{ name: 'release-key', key: { data: publicKey } }], {
      images: [{ glob: '**' }],
    });
    const authorities = parsed.spec.authorities.map((a) => ({ ...a, signatureFormat: 'toy' as never }));
    const check = await verifyPolicy({ ...parsed, spec: { ...parsed.spec, authorities } }, formats);
    expect(check).toMatchObject({ passed: true, authority: 'release-key' });
    // One referrers request; the toy referrer's manifest and its layer; nothing of the other formats.
    expect(requests.filter((r) => r.includes('/referrers/'))).toHaveLength(1);
    expect(requests.some((r) => r.endsWith('.sig'))).toBe(false);
    expect(requests.filter((r) => r.includes('/blobs/'))).toHaveLength(1);
  });

  it('is named, with the bundle, when an authority reading the legacy tags finds nothing', async () => {
    const check = await verify({ signatureFormat: 'legacy' }, formats);
    expect(check).toMatchObject({
      passed: false,
      failure: {
        kind: 'policy',
        reason:
          'no signature found in the legacy .sig/.att tags (signatureFormat: legacy); ' +
          'the image has 1 Sigstore bundle (what cosign 3 writes by default), which this authority does not read; ' +
          'the image has 1 toy signature, which count only with signatureFormat: toy',
      },
    });
    // The bundle and the toy hints read one listing of the referrers between them.
    expect(requests.filter((r) => r.includes('/referrers/'))).toHaveLength(1);
  });

  it('is not named without its registration', async () => {
    const check = await verify({ signatureFormat: 'legacy' });
    expect(check).toMatchObject({
      passed: false,
      failure: {
        reason:
          'no signature found in the legacy .sig/.att tags (signatureFormat: legacy); ' +
          'the image has 1 Sigstore bundle (what cosign 3 writes by default), which this authority does not read',
      },
    });
  });

  it('is read after the defaults by an authority without signatureFormat, once the deployment names it among them', async () => {
    const check = await verify({}, formats.withDefaults(['legacy', 'toy']));
    expect(check).toMatchObject({ passed: true, authority: 'release-key' });
    // The .sig tag first (nothing there), then one listing of the referrers for the toy.
    expect(requests.filter((r) => r.endsWith('.sig'))).toHaveLength(1);
    expect(requests.filter((r) => r.includes('/referrers/'))).toHaveLength(1);
  });
});

/** Puts the image's cosign bundle (its referrer's one layer) in a referrer of the toy artifact type. */
async function attachAsToy(where: Testbed.Registry, repository: string, digest: string): Promise<void> {
  const api = `${where.url}/v2/${repository}`;
  const index = (await (await fetch(`${api}/referrers/${digest}`)).json()) as {
    manifests: { digest: string; artifactType?: string }[];
  };
  const bundleReferrer = index.manifests.find((m) => m.artifactType?.startsWith(BUNDLE_LAYER));
  if (bundleReferrer === undefined) throw new Error('cosign wrote no bundle referrer');
  const manifest = (await (
    await fetch(`${api}/manifests/${bundleReferrer.digest}`, {
      headers: { accept: 'application/vnd.oci.image.manifest.v1+json' },
    })
  ).json()) as { config: unknown; layers: unknown[]; subject: unknown };
  const toy = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      artifactType: TOY_TYPE,
      config: manifest.config,
      layers: manifest.layers,
      subject: manifest.subject,
    }),
  );
  const toyDigest = `sha256:${createHash('sha256').update(toy).digest('hex')}`;
  const put = await fetch(`${api}/manifests/${toyDigest}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/vnd.oci.image.manifest.v1+json' },
    body: toy,
  });
  if (put.status !== 201) throw new Error(`pushing the toy referrer: ${put.status} ${await put.text()}`);
}
