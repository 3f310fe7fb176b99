import { afterEach, describe, expect, it } from 'vitest';
import type { ArtifactQuery, ListedAnnotationMatch, ReferrersQuery } from '../src/artifacts.js';
import { RegistryClient } from '../src/client.js';
import { ArtifactDiscovery } from '../src/discovery.js';
import { RegistryError } from '../src/errors.js';
import { dispatchFetch } from '../src/net/request.js';
import type { RepositoryRef } from '../src/references.js';
import {
  ATTESTATIONS,
  BUNDLES,
  discoverAll,
  OCI11_ATTESTATIONS,
  OCI11_SIGNATURES,
  SIGNATURES,
  type Wanted,
} from './helpers/cosign-discovery.js';
import {
  DOCKER_MANIFEST,
  MemoryRegistry,
  OCI_EMPTY,
  OCI_INDEX,
  OCI_MANIFEST,
  type PushedDescriptor,
  sha256,
} from './helpers/memory-registry.js';
import { callWithin, startServer, type TestServer } from './helpers/server.js';

const SIMPLESIGNING = 'application/vnd.dev.cosign.simplesigning.v1+json';
const DSSE = 'application/vnd.dsse.envelope.v1+json';
const BUNDLE = 'application/vnd.dev.sigstore.bundle.v0.3+json';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function setup() {
  const memory = new MemoryRegistry();
  const server = await startServer(memory.handler);
  servers.push(server);
  const client = new RegistryClient({
    insecureHosts: [server.host],
    retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
  });
  const repo: RepositoryRef = { registry: server.host, repository: 'team/app' };
  const image = memory.pushImage('team/app', 'v1');
  const request = (overrides: Partial<Wanted> = {}): Wanted => ({
    image: { ...repo, digest: image.digest },
    legacySignatures: true,
    legacyAttestations: true,
    bundles: true,
    ...overrides,
  });
  return { memory, server, client, repo, image, request };
}

const tagOf = (digest: string, suffix: string) => `${digest.replace(':', '-')}${suffix}`;

function pushLegacy(
  memory: MemoryRegistry,
  repo: string,
  tag: string,
  layers: PushedDescriptor[],
  mediaType = OCI_MANIFEST,
): PushedDescriptor {
  const config = memory.pushBlob(repo, '{"config":{}}', 'application/vnd.oci.image.config.v1+json');
  return memory.pushManifest(repo, { schemaVersion: 2, mediaType, config, layers }, { tag });
}

function signatureLayer(memory: MemoryRegistry, repo: string, digest: string, n = 0): PushedDescriptor {
  const payload = JSON.stringify({
    critical: {
      identity: { 'docker-reference': repo },
      image: { 'docker-manifest-digest': digest },
      type: 'cosign container image signature',
    },
    optional: { n },
  });
  return {
    ...memory.pushBlob(repo, payload, SIMPLESIGNING),
    annotations: { 'dev.cosignproject.cosign/signature': `c2lnbmF0dXJl${n}` },
  };
}

function pushBundleReferrer(
  memory: MemoryRegistry,
  repo: string,
  subject: PushedDescriptor,
  options: { layers?: PushedDescriptor[]; predicateType?: string; artifactType?: string | null } = {},
): PushedDescriptor {
  const layers = options.layers ?? [memory.pushBlob(repo, `{"bundle":${Math.random()}}`, BUNDLE)];
  return memory.pushManifest(repo, {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    ...(options.artifactType === null ? {} : { artifactType: options.artifactType ?? BUNDLE }),
    config: { mediaType: OCI_EMPTY, digest: sha256('{}'), size: 2 },
    layers,
    subject: { mediaType: OCI_MANIFEST, digest: subject.digest, size: subject.size },
    ...(options.predicateType
      ? { annotations: { 'dev.sigstore.bundle.predicateType': options.predicateType } }
      : {}),
  });
}

describe('discoverArtifacts', () => {
  it('finds legacy signatures, legacy attestations and bundle referrers', async () => {
    const { memory, client, repo, image, request } = await setup();
    const signature = signatureLayer(memory, 'team/app', image.digest);
    const unrelated = memory.pushBlob('team/app', 'other', 'application/octet-stream');
    pushLegacy(memory, 'team/app', tagOf(image.digest, '.sig'), [signature, unrelated]);
    const envelope = {
      ...memory.pushBlob('team/app', '{"payloadType":"application/vnd.in-toto+json"}', DSSE),
      annotations: { predicateType: 'https://slsa.dev/provenance/v1' },
    };
    pushLegacy(memory, 'team/app', tagOf(image.digest, '.att'), [envelope]);
    const referrer = pushBundleReferrer(memory, 'team/app', image, {
      predicateType: 'https://sigstore.dev/cosign/sign/v1',
    });
    pushBundleReferrer(memory, 'team/app', image, { artifactType: 'application/spdx+json' });

    const found = await discoverAll(client, request(), callWithin(5_000));

    expect(found.truncated).toEqual([]);
    expect(found.skipped).toEqual([]);
    expect(found.artifacts.map((artifact) => artifact.query)).toEqual([SIGNATURES, ATTESTATIONS, BUNDLES]);
    const [sig, att, bundle] = found.artifacts;
    expect(sig).toEqual({
      query: SIGNATURES,
      source: `${repo.registry}/team/app:${tagOf(image.digest, '.sig')} layer 0`,
      bytes: expect.any(Uint8Array),
      annotations: { 'dev.cosignproject.cosign/signature': 'c2lnbmF0dXJl0' },
      manifestAnnotations: {},
      artifactType: SIMPLESIGNING,
    });
    expect(sig && sha256(sig.bytes)).toBe(signature.digest);
    expect(att && Buffer.from(att.bytes).toString()).toContain('in-toto');
    expect(att?.annotations).toEqual({
      predicateType: 'https://slsa.dev/provenance/v1',
    });
    expect(bundle).toMatchObject({
      query: BUNDLES,
      source: `${repo.registry}/team/app@${referrer.digest}`,
      artifactType: BUNDLE,
      manifestAnnotations: { 'dev.sigstore.bundle.predicateType': 'https://sigstore.dev/cosign/sign/v1' },
    });
  });

  it('treats missing tags and no referrers as nothing found', async () => {
    const { client, request } = await setup();
    expect(await discoverAll(client, request(), callWithin(5_000))).toEqual({
      artifacts: [],
      truncated: [],
      skipped: [],
    });
  });

  it('asks only for what the request wants', async () => {
    const { server, client, request } = await setup();
    const before = server.requests.length;
    await discoverAll(client, request({ legacyAttestations: false, bundles: false }), callWithin(5_000));
    const urls = server.requests.slice(before).map((seen) => seen.url);
    expect(urls).toHaveLength(1);
    expect(urls[0]).toMatch(/\.sig$/);
    const onlyBundles = server.requests.length;
    await discoverAll(
      client,
      request({ legacySignatures: false, legacyAttestations: false }),
      callWithin(5_000),
    );
    expect(server.requests.slice(onlyBundles).map((seen) => seen.url.split('/')[4])).toEqual(['referrers']);
  });

  it('looks in the signature repository, with the tag prefix', async () => {
    const { memory, client, repo, image, request } = await setup();
    const signature = signatureLayer(memory, 'sigs/store', image.digest);
    pushLegacy(memory, 'sigs/store', `team-${tagOf(image.digest, '.sig')}`, [signature]);
    pushLegacy(memory, 'team/app', tagOf(image.digest, '.sig'), [
      signatureLayer(memory, 'team/app', image.digest),
    ]);
    pushBundleReferrer(memory, 'sigs/store', image);
    const found = await discoverAll(
      client,
      request({
        signatureRepository: { ...repo, repository: 'sigs/store' },
        tagPrefix: 'team-',
        legacyAttestations: false,
      }),
      callWithin(5_000),
    );
    expect(found.artifacts.map((artifact) => artifact.source.split(' ')[0]?.split('@')[0])).toEqual([
      `${repo.registry}/sigs/store:team-${tagOf(image.digest, '.sig')}`,
      `${repo.registry}/sigs/store`,
    ]);
  });

  it('accepts a Docker schema 2 .sig manifest', async () => {
    const { memory, client, image, request } = await setup();
    pushLegacy(
      memory,
      'team/app',
      tagOf(image.digest, '.sig'),
      [signatureLayer(memory, 'team/app', image.digest)],
      DOCKER_MANIFEST,
    );
    const found = await discoverAll(client, request({ bundles: false }), callWithin(5_000));
    expect(found.artifacts).toHaveLength(1);
  });

  it('reads at most maxLayers layers and reports the truncation', async () => {
    const { memory, client, repo, image, request } = await setup();
    const layers = Array.from({ length: 40 }, (_, n) => signatureLayer(memory, 'team/app', image.digest, n));
    pushLegacy(memory, 'team/app', tagOf(image.digest, '.sig'), layers);
    const found = await discoverAll(client, request(), callWithin(10_000), { maxLayers: 32 });
    expect(found.artifacts).toHaveLength(32);
    expect(found.truncated).toEqual([
      {
        source: `${repo.registry}/team/app:${tagOf(image.digest, '.sig')}`,
        query: SIGNATURES,
        by: 'count',
        limit: 32,
        found: 40,
      },
    ]);
  });

  it('reads at most maxTotalBytes of layers and bundles, and reports where it stopped', async () => {
    const { memory, client, image, request } = await setup();
    const layers = Array.from({ length: 6 }, (_, n) => signatureLayer(memory, 'team/app', image.digest, n));
    pushLegacy(memory, 'team/app', tagOf(image.digest, '.sig'), layers);
    const perLayer = layers[0]?.size ?? 0;
    for (let n = 0; n < 3; n++) {
      const bundle = memory.pushBlob('team/app', `{"n":${n},"pad":"${'x'.repeat(perLayer * 2)}"}`, BUNDLE);
      pushBundleReferrer(memory, 'team/app', image, { layers: [bundle] });
    }
    const found = await discoverAll(client, request(), callWithin(10_000), {
      maxTotalBytes: perLayer * 4,
      concurrency: 1,
    });
    expect(found.artifacts.filter((artifact) => artifact.query === SIGNATURES)).toHaveLength(4);
    expect(found.artifacts.filter((artifact) => artifact.query === BUNDLES)).toHaveLength(1);
    expect(found.truncated).toMatchObject([
      { query: SIGNATURES, by: 'bytes', limit: perLayer * 4, found: 6 },
      { query: BUNDLES, by: 'bytes', found: 3 },
    ]);
  });

  it('reads at most maxReferrers bundles and reports the truncation', async () => {
    const { memory, client, image, request } = await setup();
    for (let n = 0; n < 3; n++) pushBundleReferrer(memory, 'team/app', image);
    const found = await discoverAll(client, request(), callWithin(5_000), { maxReferrers: 2 });
    expect(found.artifacts).toHaveLength(2);
    expect(found.truncated).toMatchObject([{ query: BUNDLES, by: 'count', limit: 2, found: 3 }]);
  });

  it('reports a referrers list the client cut short', async () => {
    const { memory, server, image, request } = await setup();
    pushBundleReferrer(memory, 'team/app', image);
    pushBundleReferrer(memory, 'team/app', image);
    const client = new RegistryClient({
      insecureHosts: [server.host],
      limits: { referrersMaxDescriptors: 1 },
    });
    const found = await discoverAll(client, request(), callWithin(5_000));
    expect(found.artifacts).toHaveLength(1);
    expect(found.truncated).toMatchObject([{ query: BUNDLES, found: undefined }]);
  });

  it('skips unusable referrers and says why', async () => {
    const { memory, client, repo, image, request } = await setup();
    memory.referrersApi = false;
    const good = pushBundleReferrer(memory, 'team/app', image);
    const noLayers = pushBundleReferrer(memory, 'team/app', image, { layers: [] });
    const twoLayers = pushBundleReferrer(memory, 'team/app', image, {
      layers: [memory.pushBlob('team/app', 'a', BUNDLE), memory.pushBlob('team/app', 'b', BUNDLE)],
    });
    const otherSubject = pushBundleReferrer(memory, 'team/app', { ...image, digest: sha256('other image') });
    const sbom = pushBundleReferrer(memory, 'team/app', image, { artifactType: 'application/spdx+json' });
    const index = memory.pushManifest('team/app', { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [] });
    const missing = { mediaType: OCI_MANIFEST, digest: sha256('gone'), size: 1 };
    const listed = [good, noLayers, twoLayers, otherSubject, sbom, index, missing, good].map(
      (descriptor) => ({
        ...descriptor,
        artifactType: BUNDLE,
      }),
    );
    listed.push({ ...good, artifactType: 'application/vnd.example.sbom' });
    memory.pushManifest(
      'team/app',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: listed },
      { tag: tagOf(image.digest, '') },
    );

    const found = await discoverAll(client, request(), callWithin(5_000));

    expect(found.artifacts.map((artifact) => artifact.source)).toEqual([
      `${repo.registry}/team/app@${good.digest}`,
    ]);
    const at = (digest: string) => `${repo.registry}/team/app@${digest}`;
    expect(found.skipped).toEqual([
      {
        query: BUNDLES,
        source: at(noLayers.digest),
        reason: 'the referrer has 0 bundle layers, not exactly one',
      },
      {
        query: BUNDLES,
        source: at(twoLayers.digest),
        reason: 'the referrer has 2 bundle layers, not exactly one',
      },
      {
        query: BUNDLES,
        source: at(otherSubject.digest),
        reason: `the referrer's subject is ${sha256('other image')}, not ${image.digest}`,
      },
      {
        query: BUNDLES,
        source: at(sbom.digest),
        reason: 'the referrer\'s artifactType is "application/spdx+json", not a Sigstore bundle',
      },
      {
        query: BUNDLES,
        source: at(index.digest),
        reason: 'the referrer is an index, not an image manifest',
      },
      {
        query: BUNDLES,
        source: at(missing.digest),
        reason: 'the referrer manifest is listed but does not exist',
      },
    ]);
  });

  it('falls back to the descriptor for artifactType and predicateType', async () => {
    const { memory, client, image, request } = await setup();
    memory.referrersApi = false;
    const referrer = pushBundleReferrer(memory, 'team/app', image, { artifactType: null });
    const listed = {
      ...referrer,
      artifactType: `${BUNDLE}`,
      annotations: { 'dev.sigstore.bundle.predicateType': 'p' },
    };
    memory.pushManifest(
      'team/app',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [listed] },
      { tag: tagOf(image.digest, '') },
    );
    const [bundle] = (await discoverAll(client, request(), callWithin(5_000))).artifacts;
    expect(bundle).toMatchObject({
      artifactType: BUNDLE,
      manifestAnnotations: { 'dev.sigstore.bundle.predicateType': 'p' },
    });
  });

  it('leaves predicateType undefined when nobody states it', async () => {
    const { memory, client, image, request } = await setup();
    pushBundleReferrer(memory, 'team/app', image);
    const [bundle] = (await discoverAll(client, request(), callWithin(5_000))).artifacts;
    expect(bundle).toMatchObject({ query: BUNDLES, manifestAnnotations: {} });
  });

  it('refuses a .sig tag that points at an index', async () => {
    const { memory, client, image, request } = await setup();
    memory.pushManifest(
      'team/app',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [] },
      { tag: tagOf(image.digest, '.sig') },
    );
    const error = await discoverAll(client, request(), callWithin(5_000)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RegistryError);
    expect((error as RegistryError).code).toBe('MALFORMED');
  });

  it('skips a layer announced larger than the artifact cap, before downloading it', async () => {
    const { memory, server, client, image, request } = await setup();
    const layer = signatureLayer(memory, 'team/app', image.digest);
    pushLegacy(memory, 'team/app', tagOf(image.digest, '.sig'), [{ ...layer, size: 2 * 1024 * 1024 }]);
    const found = await discoverAll(client, request(), callWithin(5_000));
    expect(found.artifacts).toEqual([]);
    expect(found.skipped).toMatchObject([
      {
        query: SIGNATURES,
        reason: `layer ${layer.digest} announces 2097152 bytes; the limit is 1048576`,
      },
    ]);
    expect(server.requests.some((seen) => seen.url.includes('/blobs/'))).toBe(false);
  });

  it('passes registry failures while reading a referrer manifest on', async () => {
    const { memory, server, image, request } = await setup();
    const referrer = pushBundleReferrer(memory, 'team/app', image);
    const client = new RegistryClient({
      insecureHosts: [server.host],
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
      fetch: async (url, init) =>
        url.pathname.endsWith(referrer.digest)
          ? new Response('down', { status: 503 })
          : dispatchFetch(url, init),
    });
    const error = (await discoverAll(client, request(), callWithin(5_000)).catch(
      (caught: unknown) => caught,
    )) as RegistryError;
    expect(error.code).toBe('SERVER_ERROR');
  });

  it('passes registry failures while reading a layer on, instead of skipping the layer', async () => {
    const { memory, server, image, request } = await setup();
    const layer = signatureLayer(memory, 'team/app', image.digest);
    pushLegacy(memory, 'team/app', tagOf(image.digest, '.sig'), [layer]);
    const client = new RegistryClient({
      insecureHosts: [server.host],
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
      fetch: async (url, init) =>
        url.pathname.includes('/blobs/') ? new Response('down', { status: 503 }) : dispatchFetch(url, init),
    });
    const error = (await discoverAll(client, request(), callWithin(5_000)).catch(
      (caught: unknown) => caught,
    )) as RegistryError;
    expect(error.code).toBe('SERVER_ERROR');
  });

  it('passes registry failures on instead of reporting nothing found', async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(500).end();
    });
    servers.push(server);
    const client = new RegistryClient({
      insecureHosts: [server.host],
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    });
    const request: Wanted = {
      image: { registry: server.host, repository: 'a', digest: sha256('i') },
      legacySignatures: true,
      legacyAttestations: false,
      bundles: false,
    };
    const error = (await discoverAll(client, request, callWithin(5_000)).catch(
      (caught: unknown) => caught,
    )) as RegistryError;
    expect(error.code).toBe('SERVER_ERROR');
  });

  describe('one bad candidate does not hide a good one (issue 9, item 10)', () => {
    it('skips an oversized signature layer and reads the good one beside it', async () => {
      const { memory, server, client, image, request } = await setup();
      const good = signatureLayer(memory, 'team/app', image.digest, 1);
      const huge = { ...signatureLayer(memory, 'team/app', image.digest, 2), size: 2 * 1024 * 1024 };
      pushLegacy(memory, 'team/app', tagOf(image.digest, '.sig'), [huge, good]);
      const found = await discoverAll(client, request(), callWithin(5_000));
      expect(found.artifacts).toHaveLength(1);
      expect(found.artifacts[0]?.source).toMatch(/\.sig layer 1$/);
      expect(found.skipped).toMatchObject([
        {
          query: SIGNATURES,
          reason: expect.stringContaining('2097152 bytes'),
        },
      ]);
      expect(server.requests.filter((seen) => seen.url.includes(huge.digest))).toHaveLength(0);
    });

    it('skips a layer whose blob does not match its digest, or is missing, and reads the rest', async () => {
      const { memory, client, image, request } = await setup();
      const tampered = signatureLayer(memory, 'team/app', image.digest, 1);
      memory.blobs.set(`team/app@${tampered.digest}`, Buffer.from('tampered'));
      const missing = { ...signatureLayer(memory, 'team/app', image.digest, 2) };
      memory.blobs.delete(`team/app@${missing.digest}`);
      const good = signatureLayer(memory, 'team/app', image.digest, 3);
      pushLegacy(memory, 'team/app', tagOf(image.digest, '.sig'), [tampered, missing, good]);
      const found = await discoverAll(client, request(), callWithin(5_000));
      expect(found.artifacts.map((artifact) => artifact.source.split(' ').at(-1))).toEqual(['2']);
      expect(found.skipped.map((skipped) => skipped.reason)).toEqual([
        expect.stringMatching(/^blob sha256:\w+ hashes to sha256:\w+, not sha256:\w+$/),
        expect.stringContaining('not found (BLOB_UNKNOWN)'),
      ]);
    });

    it('reads the layers after the 32nd', async () => {
      const { memory, client, image, request } = await setup();
      const layers = Array.from({ length: 40 }, (_, n) =>
        signatureLayer(memory, 'team/app', image.digest, n),
      );
      pushLegacy(memory, 'team/app', tagOf(image.digest, '.sig'), layers);
      const found = await discoverAll(client, request(), callWithin(10_000));
      expect(found.artifacts).toHaveLength(40);
      expect(found.truncated).toEqual([]);
    });

    it('skips a referrer whose manifest is malformed and reads the good one beside it', async () => {
      const { memory, client, image, request } = await setup();
      const good = pushBundleReferrer(memory, 'team/app', image);
      const broken = Buffer.from('{"schemaVersion": 2, "layers": "not a list"');
      const brokenDigest = sha256(broken);
      memory.manifests.set(`team/app@${brokenDigest}`, { bytes: broken, mediaType: OCI_MANIFEST, json: {} });
      memory.pushManifest(
        'team/app',
        {
          schemaVersion: 2,
          mediaType: OCI_INDEX,
          manifests: [
            { mediaType: OCI_MANIFEST, digest: brokenDigest, size: broken.length, artifactType: BUNDLE },
            { ...good, artifactType: BUNDLE },
          ],
        },
        { tag: tagOf(image.digest, '') },
      );
      memory.referrersApi = false;
      const found = await discoverAll(client, request(), callWithin(5_000));
      expect(found.artifacts.map((artifact) => artifact.source)).toEqual([
        expect.stringContaining(good.digest),
      ]);
      expect(found.skipped).toMatchObject([
        { query: BUNDLES, source: expect.stringContaining(brokenDigest) },
      ]);
    });
  });

  describe('OCI 1.1 referrers for the legacy formats (enable-oci11)', () => {
    const SIG_REFERRER = 'application/vnd.dev.cosign.artifact.sig.v1+json';
    const IN_TOTO = 'application/vnd.in-toto+json';
    function pushArtifact(
      memory: MemoryRegistry,
      subject: PushedDescriptor,
      artifactType: string,
      layers: PushedDescriptor[],
      subjectDigest = subject.digest,
    ): PushedDescriptor {
      return memory.pushManifest('team/app', {
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        artifactType,
        config: { mediaType: OCI_EMPTY, digest: sha256('{}'), size: 2 },
        layers,
        subject: { mediaType: OCI_MANIFEST, digest: subjectDigest, size: subject.size },
      });
    }

    it('reads signature referrers as legacy signatures and in-toto referrers as legacy attestations, only when asked', async () => {
      const { memory, client, repo, image, request } = await setup();
      const signature = signatureLayer(memory, 'team/app', image.digest);
      const sigReferrer = pushArtifact(memory, image, SIG_REFERRER, [signature]);
      const envelope = memory.pushBlob('team/app', '{"payloadType":"application/vnd.in-toto+json"}', IN_TOTO);
      const attReferrer = pushArtifact(memory, image, IN_TOTO, [envelope]);
      pushArtifact(memory, image, 'application/spdx+json', [envelope]);
      const at = (digest: string) => `${repo.registry}/team/app@${digest}`;
      const signatures = await discoverAll(
        client,
        request({ legacyAttestations: false, bundles: false, oci11Referrers: true }),
        callWithin(5_000),
      );
      expect(signatures.artifacts).toMatchObject([
        {
          query: OCI11_SIGNATURES,
          source: `${at(sigReferrer.digest)} layer 0`,
          annotations: signature.annotations,
        },
      ]);
      const attestations = await discoverAll(
        client,
        request({ legacySignatures: false, bundles: false, oci11Referrers: true }),
        callWithin(5_000),
      );
      expect(attestations.artifacts).toMatchObject([
        { query: OCI11_ATTESTATIONS, source: at(attReferrer.digest) },
      ]);
      const off = await discoverAll(client, request({ bundles: false }), callWithin(5_000));
      expect(off.artifacts).toEqual([]);
    });

    it('skips unusable referrers and says why; stops at maxReferrers and maxTotalBytes', async () => {
      const { memory, client, repo, image, request } = await setup();
      memory.referrersApi = false;
      const envelope = memory.pushBlob('team/app', '{"envelope":1}', IN_TOTO);
      const noLayers = pushArtifact(memory, image, IN_TOTO, []);
      const otherSubject = pushArtifact(memory, image, IN_TOTO, [envelope], sha256('other image'));
      const index = memory.pushManifest('team/app', {
        schemaVersion: 2,
        mediaType: OCI_INDEX,
        manifests: [],
      });
      const missing = { mediaType: OCI_MANIFEST, digest: sha256('gone'), size: 1 };
      const broken = Buffer.from('{"schemaVersion": 2, "layers": "not a list"');
      memory.manifests.set(`team/app@${sha256(broken)}`, {
        bytes: broken,
        mediaType: OCI_MANIFEST,
        json: {},
      });
      const malformed = { mediaType: OCI_MANIFEST, digest: sha256(broken), size: broken.length };
      const good = pushArtifact(memory, image, IN_TOTO, [envelope]);
      memory.pushManifest(
        'team/app',
        {
          schemaVersion: 2,
          mediaType: OCI_INDEX,
          manifests: [noLayers, otherSubject, index, missing, malformed, good].map((d) => ({
            ...d,
            artifactType: IN_TOTO,
          })),
        },
        { tag: tagOf(image.digest, '') },
      );
      const wanted = request({ legacySignatures: false, bundles: false, oci11Referrers: true });
      const found = await discoverAll(client, wanted, callWithin(5_000));
      const at = (digest: string) => `${repo.registry}/team/app@${digest}`;
      expect(found.artifacts.map((a) => a.source)).toEqual([at(good.digest)]);
      const A = OCI11_ATTESTATIONS;
      expect(found.skipped.map((s) => [s.source, s.query, s.reason])).toEqual([
        [at(noLayers.digest), A, 'the referrer has no layers'],
        [
          at(otherSubject.digest),
          A,
          `the referrer's subject is ${sha256('other image')}, not ${image.digest}`,
        ],
        [at(index.digest), A, 'the referrer is an index, not an image manifest'],
        [at(missing.digest), A, 'the referrer manifest is listed but does not exist'],
        [at(malformed.digest), A, expect.stringContaining('the referrer manifest is unusable')],
      ]);
      const few = await discoverAll(client, wanted, callWithin(5_000), { maxReferrers: 2 });
      expect(few.truncated).toMatchObject([{ query: A, by: 'count', limit: 2, found: 6 }]);
      const small = await discoverAll(client, wanted, callWithin(5_000), { maxTotalBytes: 1 });
      expect(small.artifacts).toEqual([]);
      expect(small.truncated).toMatchObject([{ query: A, by: 'bytes', limit: 1 }]);
    });

    it('skips an oversized signature layer and a listed referrer without an artifactType', async () => {
      const { memory, client, image, request } = await setup();
      memory.referrersApi = false;
      const big = { ...signatureLayer(memory, 'team/app', image.digest, 1), size: 10_000_000 };
      const small = signatureLayer(memory, 'team/app', image.digest, 2);
      const sigReferrer = pushArtifact(memory, image, SIG_REFERRER, [big, small]);
      const untyped = pushArtifact(memory, image, SIG_REFERRER, [small]);
      const { artifactType: _, ...withoutType } = { ...untyped, artifactType: undefined };
      memory.pushManifest(
        'team/app',
        {
          schemaVersion: 2,
          mediaType: OCI_INDEX,
          manifests: [{ ...sigReferrer, artifactType: SIG_REFERRER }, withoutType],
        },
        { tag: tagOf(image.digest, '') },
      );
      const wanted = request({ legacyAttestations: false, bundles: false, oci11Referrers: true });
      const found = await discoverAll(client, wanted, callWithin(5_000));
      expect(found.artifacts.map((a) => a.source.split(' ').at(-1))).toEqual(['1']);
      expect(found.skipped).toMatchObject([
        { query: OCI11_SIGNATURES, reason: expect.stringContaining('10000000') },
      ]);
    });

    it('passes registry failures while reading a referrer manifest on', async () => {
      const { memory, server, image, request } = await setup();
      const referrer = pushArtifact(memory, image, SIG_REFERRER, [
        signatureLayer(memory, 'team/app', image.digest),
      ]);
      const client = new RegistryClient({
        insecureHosts: [server.host],
        retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
        fetch: async (url, init) =>
          url.pathname.endsWith(referrer.digest)
            ? new Response('down', { status: 503 })
            : dispatchFetch(url, init),
      });
      const wanted = request({ legacyAttestations: false, bundles: false, oci11Referrers: true });
      const error = (await discoverAll(client, wanted, callWithin(5_000)).catch(
        (e: unknown) => e,
      )) as RegistryError;
      expect(error.code).toBe('SERVER_ERROR');
    });

    it('reports a referrers list the client cut short', async () => {
      const { memory, server, image, request } = await setup();
      const envelope = memory.pushBlob('team/app', '{"envelope":2}', IN_TOTO);
      pushArtifact(memory, image, IN_TOTO, [envelope]);
      pushArtifact(memory, image, IN_TOTO, [memory.pushBlob('team/app', '{"envelope":3}', IN_TOTO)]);
      const client = new RegistryClient({
        insecureHosts: [server.host],
        limits: { referrersMaxDescriptors: 1 },
      });
      const wanted = request({ legacySignatures: false, bundles: false, oci11Referrers: true });
      const found = await discoverAll(client, wanted, callWithin(5_000));
      expect(found.truncated).toMatchObject([{ query: OCI11_ATTESTATIONS, found: undefined }]);
    });
  });

  it('passes over listed referrers whose annotation says they cannot count, and reads those listed without it', async () => {
    const { memory, server, client, image, request } = await setup();
    const SIGN = 'https://sigstore.dev/cosign/sign/v1';
    const signature = pushBundleReferrer(memory, 'team/app', image, { predicateType: SIGN });
    const provenance = pushBundleReferrer(memory, 'team/app', image, {
      predicateType: 'https://slsa.dev/provenance/v1',
    });
    const unannotated = pushBundleReferrer(memory, 'team/app', image);
    const { legacySignatures: _s, legacyAttestations: _a, bundles: _b, ...where } = request();
    const key = 'dev.sigstore.bundle.predicateType';
    const read = async (skipListed: ListedAnnotationMatch) => {
      const query: ReferrersQuery = { ...(BUNDLES as ReferrersQuery), skipListed };
      const before = server.requests.length;
      const found = await new ArtifactDiscovery(client).discover({ ...where, query }, callWithin(5_000));
      const fetched = server.requests.slice(before).filter((seen) => seen.url.includes('/manifests/'));
      return { found: found.artifacts.map((a) => a.source.split('@')[1]), fetched: fetched.length };
    };
    const signatures = await read({ annotation: key, differsFrom: SIGN });
    expect(signatures.found.sort()).toEqual([signature.digest, unannotated.digest].sort());
    expect(signatures.fetched).toBe(2);
    const attestations = await read({ annotation: key, equals: SIGN });
    expect(attestations.found.sort()).toEqual([provenance.digest, unannotated.digest].sort());
    expect(attestations.fetched).toBe(2);
  });

  it('refuses a tag prefix that makes an invalid tag', async () => {
    const { client, request } = await setup();
    const error = (await discoverAll(client, request({ tagPrefix: 'bad/' }), callWithin(5_000)).catch(
      (caught: unknown) => caught,
    )) as RegistryError;
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.message).toContain('tag prefix "bad/"');
  });
});

describe('ArtifactDiscovery', () => {
  it('reads each distinct request once, and lists the referrers once for every query that reads them', async () => {
    const { memory, server, client, image, request } = await setup();
    pushLegacy(memory, 'team/app', tagOf(image.digest, '.sig'), [
      signatureLayer(memory, 'team/app', image.digest),
    ]);
    pushBundleReferrer(memory, 'team/app', image);
    const other = pushBundleReferrer(memory, 'team/app', image, {
      artifactType: 'application/vnd.example.other',
    });
    const { legacySignatures: _s, legacyAttestations: _a, bundles: _b, ...where } = request();
    const OTHER: ArtifactQuery = {
      kind: 'referrers',
      artifactType: { equals: 'application/vnd.example.other' },
      layers: { pick: 'one', mediaTypePrefix: BUNDLE, name: 'other' },
    };
    const discovery = new ArtifactDiscovery(client);
    const before = server.requests.length;
    const [first, again, bundles, others] = await Promise.all([
      discovery.discover({ ...where, query: SIGNATURES }, callWithin(5_000)),
      discovery.discover({ ...where, query: SIGNATURES }, callWithin(5_000)),
      discovery.discover({ ...where, query: BUNDLES }, callWithin(5_000)),
      discovery.discover({ ...where, query: OTHER }, callWithin(5_000)),
    ]);
    expect(again).toBe(first);
    expect(first.artifacts).toHaveLength(1);
    expect(bundles.artifacts).toHaveLength(1);
    expect(others.artifacts.map((artifact) => artifact.source)).toEqual([
      expect.stringContaining(other.digest),
    ]);
    const urls = server.requests.slice(before).map((seen) => seen.url);
    expect(urls.filter((url) => url.includes('.sig'))).toHaveLength(1);
    expect(urls.filter((url) => url.includes('/referrers/'))).toHaveLength(1);
  });

  it('reads a referrer manifest once for the queries that both list it, as from a fallback tag without annotations', async () => {
    const { memory, server, client, image, request } = await setup();
    memory.referrersApi = false;
    const SIGN = 'https://sigstore.dev/cosign/sign/v1';
    const signature = pushBundleReferrer(memory, 'team/app', image, { predicateType: SIGN });
    const provenance = pushBundleReferrer(memory, 'team/app', image, {
      predicateType: 'https://slsa.dev/provenance/v1',
    });
    // cosign's fallback index lists the referrers without their annotations.
    const listing = [signature, provenance].map(({ mediaType, digest, size }) => ({
      mediaType,
      digest,
      size,
      artifactType: BUNDLE,
    }));
    memory.pushManifest(
      'team/app',
      { schemaVersion: 2, mediaType: OCI_INDEX, manifests: listing },
      { tag: tagOf(image.digest, '') },
    );
    const { legacySignatures: _s, legacyAttestations: _a, bundles: _b, ...where } = request();
    const key = 'dev.sigstore.bundle.predicateType';
    const query = (skipListed: ListedAnnotationMatch): ReferrersQuery => ({
      ...(BUNDLES as ReferrersQuery),
      skipListed,
    });
    const discovery = new ArtifactDiscovery(client);
    const before = server.requests.length;
    const [signatures, attestations] = await Promise.all([
      discovery.discover(
        { ...where, query: query({ annotation: key, differsFrom: SIGN }) },
        callWithin(5_000),
      ),
      discovery.discover({ ...where, query: query({ annotation: key, equals: SIGN }) }, callWithin(5_000)),
    ]);
    expect(signatures.artifacts.map((a) => a.source.split('@')[1])).toEqual([signature.digest]);
    expect(attestations.artifacts.map((a) => a.source.split('@')[1])).toEqual([provenance.digest]);
    expect(signatures.skipped).toEqual([]);
    const urls = server.requests.slice(before).map((seen) => seen.url);
    for (const referrer of [signature, provenance])
      expect(
        urls.filter((url) => url.endsWith(`/manifests/${referrer.digest}`)),
        referrer.digest,
      ).toHaveLength(1);
    // Each query reads the blob of the referrer it counts, and not the other's.
    expect(urls.filter((url) => url.includes('/blobs/'))).toHaveLength(2);
  });
});
