import { createHash } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cosign, type CosignKeyPair, createCosign } from '../src/cosign.ts';
import { pushImageIndex } from '../src/image-index.ts';
import { createRunDir, ProcessGroup } from '../src/process.ts';
import { pushRandomImage, type Registry, startRegistry } from '../src/registry.ts';
import { ensureTools } from '../src/tools.ts';

// Real programs only: distribution, the referrers-capable registry, crane and cosign, from the cache
// (built on first use; `pnpm --filter @signet/testbed build-tools` warms it).

const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const SIMPLESIGNING = 'application/vnd.dev.cosign.simplesigning.v1+json';
const BUNDLE = 'application/vnd.dev.sigstore.bundle.v0.3+json';
const ACCEPT = [OCI_MANIFEST, OCI_INDEX, 'application/vnd.docker.distribution.manifest.v2+json'].join(', ');

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  artifactType?: string;
  annotations?: Record<string, string>;
}
interface Manifest {
  mediaType?: string;
  artifactType?: string;
  config?: Descriptor;
  layers?: Descriptor[];
  manifests?: Descriptor[];
  subject?: Descriptor;
  annotations?: Record<string, string>;
}

async function get(
  url: string,
  accept = ACCEPT,
): Promise<{ status: number; body: Buffer; type: string | null }> {
  const response = await fetch(url, { headers: { accept }, signal: AbortSignal.timeout(10_000) });
  return {
    status: response.status,
    body: Buffer.from(await response.arrayBuffer()),
    type: response.headers.get('content-type'),
  };
}

async function manifest(registry: Registry, repo: string, reference: string): Promise<Manifest | undefined> {
  const response = await get(`${registry.url}/v2/${repo}/manifests/${reference}`);
  if (response.status === 404) return undefined;
  expect(response.status).toBe(200);
  if (reference.startsWith('sha256:')) expect(sha256(response.body)).toBe(reference);
  return JSON.parse(response.body.toString('utf8')) as Manifest;
}

async function blobJson(registry: Registry, repo: string, digest: string): Promise<Record<string, unknown>> {
  const response = await get(`${registry.url}/v2/${repo}/blobs/${digest}`, '*/*');
  expect(response.status).toBe(200);
  expect(sha256(response.body)).toBe(digest);
  return JSON.parse(response.body.toString('utf8')) as Record<string, unknown>;
}

const sha256 = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const fallbackTag = (digest: string) => digest.replace(':', '-');

describe('registries, crane and cosign', () => {
  let group: ProcessGroup | undefined;
  let runDir: string;
  let plain: Registry;
  let oci: Registry;
  let crane: string;
  let cosign: Cosign;
  let key: CosignKeyPair;
  let otherKey: CosignKeyPair;

  beforeAll(async () => {
    const tools = await ensureTools(['crane', 'cosign', 'registry', 'oci-registry'], {
      onProgress: (event) => console.log(`testbed: ${event.message}`),
    });
    crane = tools.crane;
    runDir = await createRunDir('signet-testbed-');
    group = new ProcessGroup({ runDir, graceMs: 2_000 });
    [plain, oci] = await Promise.all([
      startRegistry({ referrers: false, group }),
      startRegistry({ referrers: true, group }),
    ]);
    cosign = await createCosign({ workDir: runDir });
    [key, otherKey] = await Promise.all([
      cosign.generateKeyPair(join(runDir, 'keys'), 'test-password'),
      cosign.generateKeyPair(join(runDir, 'other-keys'), 'other-password'),
    ]);
  });

  afterAll(async () => {
    await group?.stopAll();
    // Keep the logs of a failed run: SIGNET_KEEP_RUN_DIR=1 pnpm exec vitest run
    if (runDir && !process.env.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
  });

  const push = (registry: Registry, repo: string) =>
    pushRandomImage(registry, repo, 'v1', { crane, workDir: runDir });

  it('both registries answer GET /v2/', async () => {
    expect((await get(`${plain.url}/v2/`)).status).toBe(200);
    expect((await get(`${oci.url}/v2/`)).status).toBe(200);
    expect(plain.host).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it('only the referrers-capable registry serves the referrers API', async () => {
    const onPlain = await push(plain, 'referrers/probe');
    const onOci = await push(oci, 'referrers/probe');
    expect((await get(`${plain.url}/v2/referrers/probe/referrers/${onPlain}`)).status).toBe(404);
    const response = await get(`${oci.url}/v2/referrers/probe/referrers/${onOci}`, OCI_INDEX);
    expect(response.status).toBe(200);
    expect(response.type).toContain(OCI_INDEX);
    const index = JSON.parse(response.body.toString('utf8')) as Manifest;
    expect(index.mediaType).toBe(OCI_INDEX);
    // This registry answers `"manifests": null` when nothing refers to the image (the spec wants []):
    // a quirk clients such as Signet's verifier must accept.
    expect(index.manifests ?? []).toEqual([]);
  });

  it('pushes a unique image and reads it back by digest', async () => {
    const first = await push(plain, 'images/app');
    const second = await push(plain, 'images/app');
    expect(first).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(second).not.toBe(first);
    const image = await manifest(plain, 'images/app', second);
    expect(image?.layers).toHaveLength(1);
    expect(await manifest(plain, 'images/app', 'v1')).toEqual(image);
  });

  it('legacy keyed signature: the .sig tag holds a simplesigning layer with the signature annotation', async () => {
    const digest = await push(plain, 'signed/legacy');
    const ref = `${plain.host}/signed/legacy@${digest}`;
    await cosign.signLegacyKeyed(ref, key);

    const signatures = await manifest(plain, 'signed/legacy', `${fallbackTag(digest)}.sig`);
    const layer = signatures?.layers?.[0];
    expect(layer?.mediaType).toBe(SIMPLESIGNING);
    expect(layer?.annotations?.['dev.cosignproject.cosign/signature']).toMatch(/^[A-Za-z0-9+/=]{40,}$/);
    const payload = await blobJson(plain, 'signed/legacy', layer?.digest ?? '');
    expect(payload).toMatchObject({ critical: { image: { 'docker-manifest-digest': digest } } });

    await expect(cosign.verify(ref, key.publicKey)).resolves.toBeDefined();
    await expect(cosign.verify(ref, otherKey.publicKey)).rejects.toMatchObject({ code: 'COMMAND_FAILED' });
  });

  it('bundle keyed signature is an OCI referrer on the referrers-capable registry', async () => {
    const digest = await push(oci, 'signed/bundle');
    const ref = `${oci.host}/signed/bundle@${digest}`;
    await cosign.signBundleKeyed(ref, key);

    const response = await get(`${oci.url}/v2/signed/bundle/referrers/${digest}`, OCI_INDEX);
    const index = JSON.parse(response.body.toString('utf8')) as Manifest;
    expect(index.manifests).toHaveLength(1);
    expect(index.manifests?.[0]?.artifactType).toBe(BUNDLE);
    const referrer = await manifest(oci, 'signed/bundle', index.manifests?.[0]?.digest ?? '');
    expect(referrer?.subject?.digest).toBe(digest);
    expect(referrer?.layers?.[0]?.mediaType).toBe(BUNDLE);
    const bundle = await blobJson(oci, 'signed/bundle', referrer?.layers?.[0]?.digest ?? '');
    expect(bundle).toMatchObject({
      mediaType: BUNDLE,
      dsseEnvelope: { payloadType: 'application/vnd.in-toto+json' },
    });
    // No tag schemes on a registry that has the API.
    expect(await manifest(oci, 'signed/bundle', fallbackTag(digest))).toBeUndefined();
    expect(await manifest(oci, 'signed/bundle', `${fallbackTag(digest)}.sig`)).toBeUndefined();

    await expect(cosign.verify(ref, key.publicKey)).resolves.toBeDefined();
    await expect(cosign.verify(ref, otherKey.publicKey)).rejects.toMatchObject({ code: 'COMMAND_FAILED' });
  });

  it('bundle keyed signature falls back to the sha256-<hex> index tag without the referrers API', async () => {
    const digest = await push(plain, 'signed/fallback');
    const ref = `${plain.host}/signed/fallback@${digest}`;
    await cosign.signBundleKeyed(ref, key);

    expect((await get(`${plain.url}/v2/signed/fallback/referrers/${digest}`)).status).toBe(404);
    const index = await manifest(plain, 'signed/fallback', fallbackTag(digest));
    expect(index?.mediaType).toBe(OCI_INDEX);
    expect(index?.manifests?.map((m) => m.artifactType)).toEqual([BUNDLE]);
    const referrer = await manifest(plain, 'signed/fallback', index?.manifests?.[0]?.digest ?? '');
    expect(referrer?.subject?.digest).toBe(digest);

    await expect(cosign.verify(ref, key.publicKey)).resolves.toBeDefined();
  });

  it('a two-platform image index, signed with --recursive: the index and each platform manifest', async () => {
    const pushed = await pushImageIndex(plain, 'multi/app', 'v1', { crane, workDir: runDir });
    const index = await manifest(plain, 'multi/app', pushed.digest);
    expect(index?.mediaType).toBe(OCI_INDEX);
    expect(index?.manifests?.map((m) => [m.digest, (m as { platform?: unknown }).platform])).toEqual(
      pushed.platforms.map(({ platform, digest }) => {
        const [os, architecture] = platform.split('/');
        return [digest, { os, architecture }];
      }),
    );
    await cosign.signLegacyKeyed(`${plain.host}/multi/app@${pushed.digest}`, key, { recursive: true });
    for (const digest of [pushed.digest, ...pushed.platforms.map((p) => p.digest)]) {
      const signatures = await manifest(plain, 'multi/app', `${fallbackTag(digest)}.sig`);
      expect(signatures?.layers?.[0]?.mediaType, digest).toBe(SIMPLESIGNING);
    }
  });

  it('attestations: a bundle referrer carrying the predicate type, and the legacy .att tag', async () => {
    const predicateType = 'https://signet.dev/test-predicate/v1';
    const predicatePath = join(runDir, 'predicate.json');
    await writeFile(predicatePath, JSON.stringify({ builder: 'signet-testbed', ok: true }));

    const onOci = await push(oci, 'attested/app');
    const ociRef = `${oci.host}/attested/app@${onOci}`;
    await cosign.attest(ociRef, key, { predicatePath, type: predicateType, format: 'bundle' });
    const response = await get(`${oci.url}/v2/attested/app/referrers/${onOci}`, OCI_INDEX);
    const [attestation] = (JSON.parse(response.body.toString('utf8')) as Manifest).manifests ?? [];
    expect(attestation?.artifactType).toBe(BUNDLE);
    expect(attestation?.annotations?.['dev.sigstore.bundle.predicateType']).toBe(predicateType);
    await expect(cosign.verifyAttestation(ociRef, key.publicKey, predicateType)).resolves.toBeDefined();

    const onPlain = await push(plain, 'attested/app');
    const plainRef = `${plain.host}/attested/app@${onPlain}`;
    await cosign.attest(plainRef, key, { predicatePath, type: predicateType, format: 'legacy' });
    const attestations = await manifest(plain, 'attested/app', `${fallbackTag(onPlain)}.att`);
    expect(attestations?.layers?.[0]?.mediaType).toBe('application/vnd.dsse.envelope.v1+json');
    await expect(cosign.verifyAttestation(plainRef, key.publicKey, predicateType)).resolves.toBeDefined();
  });
});
