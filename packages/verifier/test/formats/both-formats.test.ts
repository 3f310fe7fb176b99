// Issue 23, item 1, with the real cosign 3: `cosign sign` and `cosign attest` with their defaults
// (a Sigstore bundle as an OCI referrer, or in the fallback tag where the registry has no referrers
// API) and with `--new-bundle-format=false` (the legacy .sig/.att tags), keyed and keyless (the
// testbed's private Sigstore: Fulcio, timestamp authority, an OIDC issuer; no log), all admitted by
// one policy that names no signature format. `signatureFormat` still restricts an authority to one
// format, and a format the registry cannot serve neither hides a valid signature in the other nor
// lets an authority say no.

import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseReference } from '@signet/core';
import { dispatchFetch, RegistryClient } from '@signet/registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VerificationCache } from '../../src/cache.js';
import { ImageVerifier } from '../../src/image-verifier.js';
import { type CompiledAuthorities, compileAuthorities } from '../../src/policy/compile.js';
import type { PolicyCheck } from '../../src/policy/verify-policy.js';
import { trustRootResolver } from '../../src/trust/compile.js';
import { trustRootFromJSON } from '../../src/trust/trusted-root.js';
import { clusterImagePolicy } from '../support/policies.js';
import { ensureTestTools, loadTestbed, type Testbed } from '../support/registry-helpers.js';

const SETUP_TIMEOUT = 30 * 60_000;
const WORKFLOW = { repository: 'acme/app', workflowPath: '.github/workflows/release.yml' };
const SAN = 'https://github.com/acme/app/.github/workflows/release.yml@refs/heads/main';
const BUILD = 'https://example.com/build/v1';
type Where = 'oci' | 'plain';
type Signer = 'keyed' | 'keyless';
type Format = 'bundle' | 'legacy';
type Evidence = 'signature' | 'attestation';
const SHAPES = (['oci', 'plain'] as const).flatMap((where) =>
  (['keyed', 'keyless'] as const).flatMap((signer) =>
    (['bundle', 'legacy'] as const).flatMap((format) =>
      (['signature', 'attestation'] as const).map((evidence) => [where, signer, format, evidence] as const),
    ),
  ),
);

describe("cosign 3's signatures and attestations in either format, under a policy that names none", () => {
  let testbed: typeof Testbed;
  let group: Testbed.ProcessGroup | undefined;
  let registries: Record<Where, Testbed.Registry>;
  let sigstore: Testbed.PrivateSigstore;
  let cosign: Testbed.Cosign;
  let key: Testbed.CosignKeyPair;
  let keyless: Testbed.KeylessSigner;
  let publicKey = '';
  const images = new Map<string, string>();
  const broken = new Set<string>();
  let registry: RegistryClient;

  beforeAll(async () => {
    testbed = await loadTestbed();
    const { crane } = await ensureTestTools(testbed, [
      'crane',
      'cosign',
      'registry',
      'oci-registry',
      'fulcio',
    ]);
    group = new testbed.ProcessGroup({ runDir: await testbed.createRunDir('signet-both-formats-') });
    const started = group;
    let oci: Testbed.Registry;
    let plain: Testbed.Registry;
    [sigstore, oci, plain] = await Promise.all([
      testbed.startPrivateSigstore({ group: started }),
      testbed.startRegistry({ referrers: true, group: started }),
      testbed.startRegistry({ referrers: false, group: started }),
    ]);
    registries = { oci, plain };
    cosign = await testbed.createCosign({ workDir: started.runDir });
    key = await cosign.generateKeyPair(join(started.runDir, 'keys'), 'pw');
    publicKey = await readFile(key.publicKey, 'utf8');
    const dir = join(started.runDir, 'keyless');
    const files = await sigstore.writeFiles(dir);
    const identityTokenFile = join(dir, 'token');
    await writeFile(identityTokenFile, sigstore.issuer.mintToken(testbed.workflowClaims(WORKFLOW)));
    keyless = {
      identityTokenFile,
      fulcioUrl: sigstore.fulcio.url,
      timestampUrl: sigstore.timestampAuthority.timestampUrl,
      ...files,
    };
    const predicatePath = join(started.runDir, 'predicate.json');
    await writeFile(predicatePath, JSON.stringify({ level: 3 }));
    registry = new RegistryClient({
      insecureHosts: [oci.host, plain.host],
      retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
      fetch: (url, init) => {
        // A registry that cannot serve one image's .sig tag (the repository name says which).
        if (url.pathname.endsWith('.sig') && [...broken].some((repo) => url.pathname.includes(`/${repo}/`)))
          throw new TypeError('socket exploded');
        return dispatchFetch(url, init);
      },
    });
    const sign = (image: string, signer: Signer, format: Format, evidence: Evidence) => {
      const attest = { predicatePath, type: BUILD, format };
      if (signer === 'keyless')
        return evidence === 'signature'
          ? cosign.signKeyless(image, keyless, format)
          : cosign.attestKeyless(image, keyless, attest);
      if (evidence === 'attestation') return cosign.attest(image, key, attest);
      return format === 'bundle' ? cosign.signBundleKeyed(image, key) : cosign.signLegacyKeyed(image, key);
    };
    for (const [where, signer, format, evidence] of SHAPES) {
      const repo = `both/${signer}-${format}-${evidence}`;
      const digest = await testbed.pushRandomImage(registries[where], repo, 'v1', {
        crane,
        workDir: started.runDir,
      });
      const image = `${registries[where].host}/${repo}@${digest}`;
      images.set(`${where}/${signer}/${format}/${evidence}`, image);
      await sign(image, signer, format, evidence);
    }
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await sigstore?.stop();
    await group?.stopAll();
    if (group && !process.env.SIGNET_KEEP_RUN_DIR) await rm(group.runDir, { recursive: true, force: true });
  });

  /** One authority of `signer`, for `evidence`, with `signatureFormat` when given. */
  async function policy(
    signer: Signer,
    evidence: Evidence,
    signatureFormat?: Format,
  ): Promise<CompiledAuthorities> {
    const identity =
      signer === 'keyed'
        ? { key: { data: publicKey } }
        : {
            keyless: {
              trustRootRef: 'private',
              insecureIgnoreSCT: true,
              identities: [{ issuer: sigstore.issuer.url, subject: SAN }],
            },
            rfc3161timestamp: { trustRootRef: 'private' },
          };
    const authority = {
      name: 'release',
      ...identity,
      ...(signatureFormat === undefined ? {} : { signatureFormat }),
      ...(evidence === 'attestation' ? { attestations: [{ name: 'build', predicateType: BUILD }] } : {}),
    };
    const cip = clusterImagePolicy([authority], { images: [{ glob: '**' }] }, 'release');
    const root = trustRootFromJSON(sigstore.trustedRoot, { name: 'private' });
    const revision = `${Math.random()}`;
    return compileAuthorities(cip, { trustRoots: trustRootResolver([root]), revision: () => revision });
  }

  async function check(image: string, toVerify: CompiledAuthorities): Promise<PolicyCheck> {
    const verifier = new ImageVerifier({ registry, cache: new VerificationCache() });
    const result = await verifier.verifyImage(
      { reference: parseReference(image), policies: [toVerify] },
      { signal: new AbortController().signal, deadline: Date.now() + 30_000 },
    );
    return result.checks[0] as PolicyCheck;
  }

  it('admits every one of them without signatureFormat; signatureFormat admits its own format only', async () => {
    const outcomes: Record<string, [boolean, boolean, boolean]> = {};
    const expected: Record<string, [boolean, boolean, boolean]> = {};
    for (const [name, image] of images) {
      const [, signer, format, evidence] = name.split('/') as [Where, Signer, Format, Evidence];
      const results = await Promise.all([
        check(image, await policy(signer, evidence)),
        check(image, await policy(signer, evidence, 'legacy')),
        check(image, await policy(signer, evidence, 'bundle')),
      ]);
      outcomes[name] = results.map((r) => r.passed) as [boolean, boolean, boolean];
      expected[name] = [true, format === 'legacy', format === 'bundle'];
    }
    expect(outcomes).toEqual(expected);
  });

  it('counts a valid signature in the other format when one format cannot be read, and cannot say no while it cannot', async () => {
    const bundled = images.get('oci/keyed/bundle/signature') ?? '';
    const legacy = images.get('oci/keyed/legacy/signature') ?? '';
    broken.add('keyed-bundle-signature');
    broken.add('keyed-legacy-signature');
    try {
      expect((await check(bundled, await policy('keyed', 'signature'))).passed).toBe(true);
      const unreadable = await check(legacy, await policy('keyed', 'signature'));
      expect(unreadable).toMatchObject({
        passed: false,
        failure: { kind: 'infrastructure', reason: 'cannot read signatures from the registry' },
      });
    } finally {
      broken.clear();
    }
  });
});
