import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ensureTools,
  type KeylessSigner,
  type PrivateSigstore,
  pushImageIndex,
  pushRandomImage,
  type Registry,
  startPrivateSigstore,
  startRegistry,
  workflowClaims,
} from '@signet/testbed';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { type KubectlResult, manifestText } from '../src/cluster/index.ts';
import { createNamespace, deniedByWebhook, poll } from '../src/scenarios/kube.ts';
import { INCLUDE_LABEL } from '../src/scenarios/rollout.ts';
import { type SignetEnvironment, startSignetEnvironment } from '../src/scenarios/signet-environment.ts';
import { workloadManifest } from '../src/scenarios/workloads.ts';

// Issue 23 through the webhook on a real API server: images signed and attested by the real cosign
// 3 with its defaults (a Sigstore bundle: an OCI referrer, or the fallback tag on a registry
// without the referrers API) and with --new-bundle-format=false (the legacy .sig/.att tags), keyed
// and keyless (the testbed's private Sigstore: Fulcio, a timestamp authority, an OIDC issuer), all
// admitted by policies that name no signature format; `signatureFormat: legacy` still restricts,
// and its denial says where the signature is. A two-platform image index signed on its platforms
// only is denied by default (policy-controller's behaviour) and admitted by a policy annotated
// `signet.dev/index-signatures: platforms`.

const log = (line: string) => process.stderr.write(`${line}\n`);

const NAMESPACE = 'cosign3';
const TRUST_ROOT = 'cosign3-sigstore';
const RUN = { repository: 'acme/app', workflowPath: '.github/workflows/release.yml' };
const BUILD = 'https://example.com/build/v1';
const POLICIES = {
  keyed: 'formats-keyed',
  keyless: 'formats-keyless',
  attested: 'formats-attested',
  attestedKeyless: 'formats-attested-keyless',
  legacyOnly: 'formats-legacy-only',
  index: 'formats-index',
  platforms: 'formats-platforms',
} as const;

interface Images {
  keyedBundleReferrers: string;
  keyedLegacy: string;
  keyedBundleFallback: string;
  keylessBundle: string;
  keylessLegacy: string;
  attestedBundle: string;
  attestedKeylessLegacy: string;
  onlySigned: string;
  unsigned: string;
  legacyOnlyPolicyBundle: string;
  indexSignedOnPlatforms: string;
  indexSignedOnIndex: string;
  platformsPolicyOnPlatforms: string;
}

function policy(name: string, globs: readonly string[], authority: object, annotations?: object): object {
  return {
    apiVersion: 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata: { name, ...(annotations ? { annotations } : {}) },
    spec: { images: globs.map((glob) => ({ glob })), authorities: [{ name: 'release', ...authority }] },
  };
}

/** The TrustRoot of the private Sigstore: its CA and TSA, no log. */
function trustRootOf(sigstore: PrivateSigstore): object {
  const chain = (pems: readonly string[]) => Buffer.from(pems.join('')).toString('base64');
  return {
    apiVersion: 'policy.sigstore.dev/v1alpha1',
    kind: 'TrustRoot',
    metadata: { name: TRUST_ROOT },
    spec: {
      sigstoreKeys: {
        certificateAuthorities: [{ uri: sigstore.fulcio.url, certChain: chain(sigstore.fulcio.chainPem) }],
        timestampAuthorities: [
          {
            uri: sigstore.timestampAuthority.timestampUrl,
            certChain: chain(sigstore.timestampAuthority.chainPem),
          },
        ],
      },
    },
  };
}

describe('Signet: cosign 3 out of the box (issue 23)', () => {
  let env: SignetEnvironment | undefined;
  let sigstore: PrivateSigstore | undefined;
  const images = {} as Images;
  let failed = false;
  const environment = (): SignetEnvironment => {
    if (!env) throw new Error('the environment did not start');
    return env;
  };
  const create = (name: string, image: string, extra: readonly string[] = []) =>
    environment().cluster.kubectl(['create', '-f', '-', ...extra], {
      input: manifestText(workloadManifest('Pod', NAMESPACE, name, image)),
    });

  beforeAll(async () => {
    env = await startSignetEnvironment({
      onProgress: log,
      prepare: async ({ cluster, images: base, publicKeyPem }) => {
        const [{ crane }, referrers, started] = await Promise.all([
          ensureTools(['crane']),
          startRegistry({ referrers: true, group: cluster.group }),
          startPrivateSigstore({ group: cluster.group, onProgress: (e) => log(e.message) }),
        ]);
        sigstore = started;
        const plain = base.registry;
        const { cosign, key } = base;
        const push = async (registry: Pick<Registry, 'host'>, repo: string) =>
          `${registry.host}/${repo}@${await pushRandomImage(registry, repo, 'v1', { crane, workDir: cluster.runDir })}`;
        const dir = join(cluster.runDir, 'keyless');
        const files = await started.writeFiles(dir);
        const identityTokenFile = join(dir, 'token');
        await writeFile(identityTokenFile, started.issuer.mintToken(workflowClaims(RUN)));
        const signer: KeylessSigner = {
          identityTokenFile,
          fulcioUrl: started.fulcio.url,
          timestampUrl: started.timestampAuthority.timestampUrl,
          ...files,
        };
        const predicatePath = join(cluster.runDir, 'build.json');
        await writeFile(predicatePath, JSON.stringify({ level: 3 }));

        images.keyedBundleReferrers = await push(referrers, 'keyed/bundle');
        await cosign.signBundleKeyed(images.keyedBundleReferrers, key);
        images.keyedLegacy = await push(referrers, 'keyed/legacy');
        await cosign.signLegacyKeyed(images.keyedLegacy, key);
        images.keyedBundleFallback = await push(plain, 'keyed/fallback');
        await cosign.signBundleKeyed(images.keyedBundleFallback, key);
        images.keylessBundle = await push(referrers, 'keyless/bundle');
        await cosign.signKeyless(images.keylessBundle, signer, 'bundle');
        images.keylessLegacy = await push(plain, 'keyless/legacy');
        await cosign.signKeyless(images.keylessLegacy, signer, 'legacy');
        images.attestedBundle = await push(referrers, 'attested/bundle');
        await cosign.attest(images.attestedBundle, key, { predicatePath, type: BUILD, format: 'bundle' });
        images.attestedKeylessLegacy = await push(plain, 'attested-keyless/legacy');
        await cosign.attestKeyless(images.attestedKeylessLegacy, signer, {
          predicatePath,
          type: BUILD,
          format: 'legacy',
        });
        images.onlySigned = await push(referrers, 'attested/only-signed');
        await cosign.signBundleKeyed(images.onlySigned, key);
        images.unsigned = await push(referrers, 'keyed/unsigned');
        images.legacyOnlyPolicyBundle = await push(referrers, 'legacy-only/app');
        await cosign.signBundleKeyed(images.legacyOnlyPolicyBundle, key);
        // Two-platform indexes: one signed on each platform only, one on the index only.
        const onPlatforms = await pushImageIndex(referrers, 'multi/platforms', 'v1', {
          crane,
          workDir: cluster.runDir,
        });
        for (const { digest } of onPlatforms.platforms)
          await cosign.signBundleKeyed(`${referrers.host}/multi/platforms@${digest}`, key);
        images.indexSignedOnPlatforms = `${referrers.host}/multi/platforms@${onPlatforms.digest}`;
        const onIndex = await pushImageIndex(referrers, 'multi/index', 'v1', {
          crane,
          workDir: cluster.runDir,
        });
        images.indexSignedOnIndex = `${referrers.host}/multi/index@${onIndex.digest}`;
        await cosign.signBundleKeyed(images.indexSignedOnIndex, key);
        const copied = await pushImageIndex(referrers, 'multi-platforms/app', 'v1', {
          crane,
          workDir: cluster.runDir,
        });
        for (const { digest } of copied.platforms)
          await cosign.signBundleKeyed(`${referrers.host}/multi-platforms/app@${digest}`, key);
        images.platformsPolicyOnPlatforms = `${referrers.host}/multi-platforms/app@${copied.digest}`;
        log(`images: ${JSON.stringify(images, null, 2)}`);

        const keyed = { key: { data: publicKeyPem } };
        const keylessAuthority = {
          keyless: {
            trustRootRef: TRUST_ROOT,
            insecureIgnoreSCT: true,
            identities: [{ issuer: started.issuer.url, subjectRegExp: '^https://github\\.com/acme/app/.*$' }],
          },
          rfc3161timestamp: { trustRootRef: TRUST_ROOT },
        };
        const attestations = [{ name: 'build', predicateType: BUILD }];
        const hosts = (repo: string) => [`${referrers.host}/${repo}/**`, `${plain.host}/${repo}/**`];
        return {
          insecureRegistries: [referrers.host],
          policies: [
            trustRootOf(started),
            policy(POLICIES.keyed, hosts('keyed'), keyed),
            policy(POLICIES.keyless, hosts('keyless'), keylessAuthority),
            policy(POLICIES.attested, hosts('attested'), { ...keyed, attestations }),
            policy(POLICIES.attestedKeyless, hosts('attested-keyless'), {
              ...keylessAuthority,
              attestations,
            }),
            policy(POLICIES.legacyOnly, hosts('legacy-only'), { ...keyed, signatureFormat: 'legacy' }),
            policy(POLICIES.index, hosts('multi'), keyed),
            policy(POLICIES.platforms, hosts('multi-platforms'), keyed, {
              'signet.dev/index-signatures': 'platforms',
            }),
          ],
          policyNames: Object.values(POLICIES),
        };
      },
    });
    try {
      const { cluster, signet } = env;
      await cluster.apply(signet.configurations());
      await createNamespace(cluster, NAMESPACE, { [INCLUDE_LABEL]: 'true' });
      await poll('Signet to deny an unsigned Pod', 30_000, async () => {
        const probe = await create('probe', images.unsigned, ['--dry-run=server']);
        return deniedByWebhook(probe) ? true : `exit ${probe.exitCode}: ${probe.stderr.trim()}`;
      });
    } catch (error) {
      failed = true;
      throw new Error(`${(error as Error).message}\n${await env.cluster.logTails(15)}`, { cause: error });
    }
  });

  beforeEach(() => {
    onTestFailed(() => {
      failed = true;
    });
  });

  afterAll(async () => {
    await env?.signet.stop();
    await sigstore?.stop();
    await env?.cluster.stop(failed ? { keepRunDir: true } : {});
    if (failed) log(`kept the run directory ${env?.cluster.runDir} (Signet log: ${env?.signet.logFile})`);
  });

  const expectAdmitted = (result: KubectlResult) => expect(result.exitCode, result.stderr).toBe(0);
  const expectDenied = (result: KubectlResult, ...fragments: string[]) => {
    expect(deniedByWebhook(result), `exit ${result.exitCode}: ${result.stderr}`).toBe(true);
    for (const fragment of fragments) expect(result.stderr).toContain(fragment);
    log(result.stderr.trim());
  };

  it("admits `cosign sign` with cosign 3's defaults under a policy that does not mention the format, keyed and keyless", async () => {
    expectAdmitted(await create('keyed-bundle', images.keyedBundleReferrers));
    expectAdmitted(await create('keyed-fallback', images.keyedBundleFallback));
    expectAdmitted(await create('keyless-bundle', images.keylessBundle));
  });

  it('admits the same signatures made with --new-bundle-format=false (the legacy .sig tag)', async () => {
    expectAdmitted(await create('keyed-legacy', images.keyedLegacy));
    expectAdmitted(await create('keyless-legacy', images.keylessLegacy));
  });

  it('admits `cosign attest` in either format under an attestation policy without a format, and denies an image only signed', async () => {
    expectAdmitted(await create('attested-bundle', images.attestedBundle));
    expectAdmitted(await create('attested-keyless-legacy', images.attestedKeylessLegacy));
    expectDenied(await create('only-signed', images.onlySigned), `policy "${POLICIES.attested}" (enforce)`);
  });

  it('denies an unsigned image, and a bundle under signatureFormat: legacy, saying where the bundle is', async () => {
    expectDenied(await create('unsigned', images.unsigned), 'no signature found');
    expectDenied(
      await create('legacy-only', images.legacyOnlyPolicyBundle),
      `policy "${POLICIES.legacyOnly}" (enforce)`,
      'no signature found in the legacy .sig/.att tags (signatureFormat: legacy); the image has 1 Sigstore bundle (what cosign 3 writes by default), which this authority does not read',
    );
  });

  it('judges a two-platform index by its own signature by default, by its platforms when the policy says so', async () => {
    expectAdmitted(await create('index-signed', images.indexSignedOnIndex));
    expectDenied(
      await create('platforms-signed', images.indexSignedOnPlatforms),
      `policy "${POLICIES.index}" (enforce)`,
    );
    expectAdmitted(await create('platforms-policy', images.platformsPolicyOnPlatforms));
  });
});
