// The registry layer against real programs from @signet/testbed: CNCF distribution (no referrers
// API: bundles go to the `sha256-<hex>` fallback tag), an OCI 1.1 registry with the referrers API,
// images pushed by crane and signatures written by cosign. Slow (cosign runs); the hostile cases
// live in the other files because a real registry cannot be made to misbehave.

import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryClient } from '../src/client.js';
import { RegistryError } from '../src/errors.js';
import { dispatchFetch } from '../src/net/request.js';
import { ATTESTATIONS, BUNDLES, discoverAll, SIGNATURES, type Wanted } from './helpers/cosign-discovery.js';
import { sha256 } from './helpers/memory-registry.js';
import { callWithin } from './helpers/server.js';
import { ensureTestTools, loadTestbed, type Testbed } from './helpers/testbed.js';

const BUNDLE = 'application/vnd.dev.sigstore.bundle.v0.3+json';
const COSIGN_SIGN_PREDICATE = 'https://sigstore.dev/cosign/sign/v1';
/** The annotation cosign puts on a bundle referrer. */
const PREDICATE_TYPE = 'dev.sigstore.bundle.predicateType';
const SETUP_TIMEOUT = 30 * 60_000;
const TEST_TIMEOUT = 120_000;

describe('the registry layer against real registries', () => {
  let testbed: typeof Testbed;
  let group: Testbed.ProcessGroup | undefined;
  let runDir = '';
  let plain: Testbed.Registry;
  let oci: Testbed.Registry;
  let crane: string;
  let cosign: Testbed.Cosign;
  let key: Testbed.CosignKeyPair;
  let client: RegistryClient;
  const methods: string[] = [];

  beforeAll(async () => {
    testbed = await loadTestbed();
    ({ crane } = await ensureTestTools(testbed, ['crane', 'cosign', 'registry', 'oci-registry']));
    runDir = await testbed.createRunDir('signet-verifier-registry-');
    group = new testbed.ProcessGroup({ runDir, graceMs: 2_000 });
    const started = group;
    [plain, oci] = await Promise.all([
      testbed.startRegistry({ referrers: false, group: started }),
      testbed.startRegistry({ referrers: true, group: started }),
    ]);
    cosign = await testbed.createCosign({ workDir: runDir });
    key = await cosign.generateKeyPair(join(runDir, 'keys'), 'test-password');
    client = new RegistryClient({
      insecureHosts: [plain.host, oci.host],
      fetch: (url, init) => {
        methods.push(`${init.method} ${url.pathname}`);
        return dispatchFetch(url, init);
      },
    });
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await group?.stopAll();
    if (runDir !== '' && !process.env.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
  });

  const push = (registry: Testbed.Registry, repository: string) =>
    testbed.pushRandomImage(registry, repository, 'v1', { crane, workDir: runDir });
  const request = (registry: Testbed.Registry, repository: string, digest: string): Wanted => ({
    image: { registry: registry.host, repository, digest },
    legacySignatures: true,
    legacyAttestations: true,
    bundles: true,
  });

  describe.each([
    ['distribution (no referrers API)', () => plain],
    ['the OCI 1.1 registry', () => oci],
  ])('%s', (_name, registryOf) => {
    it(
      'resolves a tag with HEAD and reads the manifest and its blobs, verified',
      async () => {
        const registry = registryOf();
        const digest = await push(registry, 'images/app');
        const repo = { registry: registry.host, repository: 'images/app' };
        methods.length = 0;
        expect(await client.resolveDigest({ ...repo, tag: 'v1' }, callWithin(10_000))).toBe(digest);
        expect(methods).toEqual(['HEAD /v2/images/app/manifests/v1']);

        const fetched = await client.getManifest(repo, digest, callWithin(10_000));
        expect(sha256(fetched.bytes)).toBe(digest);
        expect((await client.getManifest(repo, 'v1', callWithin(10_000))).digest).toBe(digest);
        if (fetched.manifest.kind !== 'manifest') throw new Error('crane pushed an index');
        for (const descriptor of [fetched.manifest.config, ...fetched.manifest.layers]) {
          const blob = await client.getBlob(repo, descriptor.digest, callWithin(10_000));
          expect(sha256(blob)).toBe(descriptor.digest);
          expect(blob.byteLength).toBe(descriptor.size);
        }
      },
      TEST_TIMEOUT,
    );

    it(
      'reports an unknown tag as NOT_FOUND and an unsigned image as nothing found',
      async () => {
        const registry = registryOf();
        const digest = await push(registry, 'images/unsigned');
        const repo = { registry: registry.host, repository: 'images/unsigned' };
        const error = await client
          .resolveDigest({ ...repo, tag: 'nope' }, callWithin(10_000))
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RegistryError);
        expect((error as RegistryError).code).toBe('NOT_FOUND');
        const found = await discoverAll(
          client,
          request(registry, 'images/unsigned', digest),
          callWithin(10_000),
        );
        expect(found).toEqual({ artifacts: [], truncated: [], skipped: [] });
      },
      TEST_TIMEOUT,
    );
  });

  it(
    'finds a real cosign legacy signature (.sig) with its payload and annotations',
    async () => {
      const digest = await push(plain, 'signed/legacy');
      await cosign.signLegacyKeyed(`${plain.host}/signed/legacy@${digest}`, key);
      const found = await discoverAll(client, request(plain, 'signed/legacy', digest), callWithin(20_000));
      expect(found.artifacts.map((artifact) => artifact.query)).toEqual([SIGNATURES]);
      const signature = found.artifacts[0] as (typeof found.artifacts)[number];
      const payload = JSON.parse(Buffer.from(signature.bytes).toString('utf8')) as {
        critical: { image: { 'docker-manifest-digest': string }; type: string };
      };
      expect(payload.critical.image['docker-manifest-digest']).toBe(digest);
      expect(payload.critical.type).toBe('cosign container image signature');
      expect(signature.annotations['dev.cosignproject.cosign/signature']).toMatch(/^[A-Za-z0-9+/=]{40,}$/);
      expect(signature.source).toBe(`${plain.host}/signed/legacy:${digest.replace(':', '-')}.sig layer 0`);
    },
    TEST_TIMEOUT,
  );

  it(
    'finds a cosign bundle through the referrers API',
    async () => {
      const digest = await push(oci, 'signed/bundle');
      await cosign.signBundleKeyed(`${oci.host}/signed/bundle@${digest}`, key);
      const repo = { registry: oci.host, repository: 'signed/bundle' };
      const referrers = await client.listReferrers(repo, digest, callWithin(10_000), {
        artifactType: BUNDLE,
      });
      expect(referrers.via).toBe('referrers-api');
      expect(referrers.descriptors).toHaveLength(1);

      const found = await discoverAll(client, request(oci, 'signed/bundle', digest), callWithin(20_000));
      expect(found.artifacts).toHaveLength(1);
      expect(found.artifacts[0]).toMatchObject({
        query: BUNDLES,
        artifactType: BUNDLE,
        manifestAnnotations: { [PREDICATE_TYPE]: COSIGN_SIGN_PREDICATE },
        source: `${oci.host}/signed/bundle@${referrers.descriptors[0]?.digest}`,
      });
      const bundle = found.artifacts[0]?.bytes ?? new Uint8Array();
      expect(JSON.parse(Buffer.from(bundle).toString('utf8'))).toMatchObject({
        mediaType: BUNDLE,
        dsseEnvelope: { payloadType: 'application/vnd.in-toto+json' },
      });
    },
    TEST_TIMEOUT,
  );

  it(
    'finds a cosign bundle through the fallback tag on a registry without the referrers API',
    async () => {
      const digest = await push(plain, 'signed/fallback');
      await cosign.signBundleKeyed(`${plain.host}/signed/fallback@${digest}`, key);
      const repo = { registry: plain.host, repository: 'signed/fallback' };
      methods.length = 0;
      const referrers = await client.listReferrers(repo, digest, callWithin(10_000));
      expect(referrers.via).toBe('fallback-tag');
      expect(methods).toEqual([
        `GET /v2/signed/fallback/referrers/${digest}`,
        `GET /v2/signed/fallback/manifests/${digest.replace(':', '-')}`,
      ]);
      const found = await discoverAll(client, request(plain, 'signed/fallback', digest), callWithin(20_000));
      expect(found.artifacts).toHaveLength(1);
      expect(found.artifacts[0]).toMatchObject({
        query: BUNDLES,
        artifactType: BUNDLE,
        manifestAnnotations: { [PREDICATE_TYPE]: COSIGN_SIGN_PREDICATE },
      });
    },
    TEST_TIMEOUT,
  );

  it(
    'finds attestations: a legacy .att envelope and a bundle with its predicate type',
    async () => {
      const predicateType = 'https://signet.dev/test-predicate/v1';
      const predicatePath = join(runDir, 'predicate.json');
      await writeFile(predicatePath, JSON.stringify({ builder: 'signet-verifier-test' }));

      const onPlain = await push(plain, 'attested/app');
      await cosign.attest(`${plain.host}/attested/app@${onPlain}`, key, {
        predicatePath,
        type: predicateType,
        format: 'legacy',
      });
      const legacy = await discoverAll(client, request(plain, 'attested/app', onPlain), callWithin(20_000));
      expect(legacy.artifacts.map((artifact) => artifact.query)).toEqual([ATTESTATIONS]);
      const envelope = JSON.parse(Buffer.from(legacy.artifacts[0]?.bytes ?? []).toString('utf8')) as {
        payloadType: string;
        payload: string;
      };
      expect(envelope.payloadType).toBe('application/vnd.in-toto+json');
      const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8')) as {
        predicateType: string;
        subject: { digest: { sha256: string } }[];
      };
      expect(statement.predicateType).toBe(predicateType);
      expect(statement.subject[0]?.digest.sha256).toBe(onPlain.slice('sha256:'.length));

      const onOci = await push(oci, 'attested/app');
      await cosign.attest(`${oci.host}/attested/app@${onOci}`, key, {
        predicatePath,
        type: predicateType,
        format: 'bundle',
      });
      const bundles = await discoverAll(client, request(oci, 'attested/app', onOci), callWithin(20_000));
      expect(bundles.artifacts).toMatchObject([
        { query: BUNDLES, manifestAnnotations: { [PREDICATE_TYPE]: predicateType } },
      ]);
    },
    TEST_TIMEOUT,
  );
});
