import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Cosign,
  ensureTools,
  type KeylessSigner,
  type PrivateSigstore,
  pushRandomImage,
  startPrivateSigstore,
  workflowClaims,
} from '@signet/testbed';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { type KubectlResult, manifestText } from '../src/cluster/index.ts';
import { createNamespace, deniedByWebhook, poll } from '../src/scenarios/kube.ts';
import { INCLUDE_LABEL } from '../src/scenarios/rollout.ts';
import { type SignetEnvironment, startSignetEnvironment } from '../src/scenarios/signet-environment.ts';
import { workloadManifest } from '../src/scenarios/workloads.ts';

// GitHub Artifact Attestations' kind of trust, end to end: images signed keyless by the real cosign
// with a certificate from a private Fulcio (no CT log) and an RFC 3161 timestamp from a private
// timestamp authority, nothing in a transparency log; a TrustRoot holding that CA and TSA and no
// log; a ClusterImagePolicy that asks for the workflow's identity and a timestamp (docs/
// github-artifact-attestations.md). Admitted and denied through Signet on a real API server.

const log = (line: string) => process.stderr.write(`${line}\n`);

const TRUST_ROOT = 'github-style';
const NAMESPACE = 'github-trust';
const RELEASE = { repository: 'acme/app', workflowPath: '.github/workflows/release.yml' };
const OTHER = { repository: 'someone/fork', workflowPath: '.github/workflows/release.yml' };
const POLICIES = {
  bundle: 'github-bundle',
  legacy: 'github-legacy',
  noTimestamp: 'github-no-timestamp',
  provenance: 'github-provenance',
} as const;
const SLSA_V1 = 'https://slsa.dev/provenance/v1';

interface Images {
  bundle: string;
  legacy: string;
  bundleOtherWorkflow: string;
  bundleOtherSigstore: string;
  legacyUnsigned: string;
  /** Signed as `bundle`, under a policy that forgot `rfc3161timestamp`. */
  noTimestamp: string;
  /** A keyless SLSA v1 provenance attestation (bundle), as attest-build-provenance attaches one. */
  attested: string;
  /** Only signed: no provenance. */
  notAttested: string;
}

/** The TrustRoot of a private Sigstore in the `sigstoreKeys` form: its CA and TSA chains, no log. */
function trustRootOf(sigstore: PrivateSigstore, name: string): object {
  const chain = (pems: readonly string[]) => Buffer.from(pems.join('')).toString('base64');
  return {
    apiVersion: 'policy.sigstore.dev/v1alpha1',
    kind: 'TrustRoot',
    metadata: { name },
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

/** The policy of the recipe: the release workflow's identity, a timestamp, no log, no SCT. */
function githubPolicy(
  name: string,
  glob: string,
  issuer: string,
  format?: 'bundle',
  timestamp = true,
  attestations: readonly object[] = [],
): object {
  return {
    apiVersion: 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata: { name },
    spec: {
      images: [{ glob }],
      authorities: [
        {
          name: 'release-workflow',
          keyless: {
            trustRootRef: TRUST_ROOT,
            insecureIgnoreSCT: true,
            identities: [
              {
                issuer,
                subjectRegExp: '^https://github\\.com/acme/app/\\.github/workflows/release\\.yml@refs/.*$',
              },
            ],
          },
          ...(timestamp ? { rfc3161timestamp: { trustRootRef: TRUST_ROOT } } : {}),
          ...(format ? { signatureFormat: format } : {}),
          ...(attestations.length > 0 ? { attestations } : {}),
        },
      ],
    },
  };
}

describe('Signet: GitHub-style trust (private Fulcio + timestamp authority, no transparency log)', () => {
  let env: SignetEnvironment | undefined;
  let sigstore: PrivateSigstore | undefined;
  let otherSigstore: PrivateSigstore | undefined;
  const images = {} as Images;
  let failed = false;
  const environment = (): SignetEnvironment => {
    if (!env) throw new Error('the environment did not start');
    return env;
  };
  const create = (object: object, extra: readonly string[] = []) =>
    environment().cluster.kubectl(['create', '-f', '-', ...extra], { input: manifestText(object) });

  beforeAll(async () => {
    env = await startSignetEnvironment({
      onProgress: log,
      prepare: async ({ cluster, images: base }) => {
        const { crane } = await ensureTools(['crane']);
        sigstore = await startPrivateSigstore({ group: cluster.group, onProgress: (e) => log(e.message) });
        otherSigstore = await startPrivateSigstore({ group: cluster.group });
        const registry = base.registry;
        const push = async (repo: string) =>
          `${registry.host}/${repo}@${await pushRandomImage(registry, repo, 'v1', { crane, workDir: cluster.runDir })}`;
        const signer = async (
          of: PrivateSigstore,
          run: typeof RELEASE,
          label: string,
        ): Promise<KeylessSigner> => {
          const dir = join(cluster.runDir, `sigstore-${label}`);
          const files = await of.writeFiles(dir);
          const identityTokenFile = join(dir, 'token');
          await writeFile(identityTokenFile, of.issuer.mintToken(workflowClaims(run)));
          return {
            identityTokenFile,
            fulcioUrl: of.fulcio.url,
            timestampUrl: of.timestampAuthority.timestampUrl,
            ...files,
          };
        };
        const cosign: Cosign = base.cosign;
        const release = await signer(sigstore, RELEASE, 'release');
        const other = await signer(sigstore, OTHER, 'other');
        const foreign = await signer(otherSigstore, RELEASE, 'foreign');
        images.bundle = await push('gh-bundle/app');
        await cosign.signKeyless(images.bundle, release, 'bundle');
        images.bundleOtherWorkflow = await push('gh-bundle/fork');
        await cosign.signKeyless(images.bundleOtherWorkflow, other, 'bundle');
        images.bundleOtherSigstore = await push('gh-bundle/foreign');
        await cosign.signKeyless(images.bundleOtherSigstore, foreign, 'bundle');
        images.legacy = await push('gh-legacy/app');
        await cosign.signKeyless(images.legacy, release, 'legacy');
        images.legacyUnsigned = await push('gh-legacy/unsigned');
        images.noTimestamp = await push('gh-no-timestamp/app');
        await cosign.signKeyless(images.noTimestamp, release, 'bundle');
        const predicatePath = join(cluster.runDir, 'provenance.json');
        await writeFile(
          predicatePath,
          JSON.stringify({
            buildDefinition: { buildType: 'https://actions.github.io/buildtypes/workflow/v1' },
            runDetails: { builder: { id: 'https://github.com/actions/runner/github-hosted' } },
          }),
        );
        images.attested = await push('gh-attested/app');
        await cosign.attestKeyless(images.attested, release, {
          predicatePath,
          type: 'slsaprovenance1',
          format: 'bundle',
        });
        images.notAttested = await push('gh-attested/signed-only');
        await cosign.signKeyless(images.notAttested, release, 'bundle');
        log(`images: ${JSON.stringify(images, null, 2)}`);
        return {
          insecureRegistries: [],
          policies: [
            trustRootOf(sigstore, TRUST_ROOT),
            githubPolicy(POLICIES.bundle, `${registry.host}/gh-bundle/**`, sigstore.issuer.url, 'bundle'),
            githubPolicy(POLICIES.legacy, `${registry.host}/gh-legacy/**`, sigstore.issuer.url),
            githubPolicy(
              POLICIES.noTimestamp,
              `${registry.host}/gh-no-timestamp/**`,
              sigstore.issuer.url,
              'bundle',
              false,
            ),
            githubPolicy(
              POLICIES.provenance,
              `${registry.host}/gh-attested/**`,
              sigstore.issuer.url,
              'bundle',
              true,
              [{ name: 'provenance', predicateType: SLSA_V1 }],
            ),
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
        const probe = await create(workloadManifest('Pod', NAMESPACE, 'probe', images.legacyUnsigned), [
          '--dry-run=server',
        ]);
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
    await otherSigstore?.stop();
    await env?.cluster.stop(failed ? { keepRunDir: true } : {});
    if (failed) log(`kept the run directory ${env?.cluster.runDir} (Signet log: ${env?.signet.logFile})`);
  });

  const expectAdmitted = (result: KubectlResult) => expect(result.exitCode, result.stderr).toBe(0);
  const expectDenied = (result: KubectlResult, ...fragments: string[]) => {
    expect(deniedByWebhook(result), `exit ${result.exitCode}: ${result.stderr}`).toBe(true);
    for (const fragment of fragments) expect(result.stderr).toContain(fragment);
    log(result.stderr.trim());
  };

  it("admits cosign 3's default keyless signature (a bundle: certificate + RFC 3161 timestamp, no log entry)", async () => {
    expectAdmitted(await create(workloadManifest('Pod', NAMESPACE, 'bundle', images.bundle)));
  });

  it('admits the same signature in the legacy format (--new-bundle-format=false --tlog-upload=false)', async () => {
    expectAdmitted(await create(workloadManifest('Pod', NAMESPACE, 'legacy', images.legacy)));
  });

  it("denies another workflow's signature by the same Fulcio, and a signature from another Sigstore", async () => {
    expectDenied(
      await create(workloadManifest('Pod', NAMESPACE, 'fork', images.bundleOtherWorkflow)),
      `policy "${POLICIES.bundle}" (enforce)`,
      'https://github.com/someone/fork/.github/workflows/release.yml@refs/heads/main',
    );
    expectDenied(
      await create(workloadManifest('Pod', NAMESPACE, 'foreign', images.bundleOtherSigstore)),
      `policy "${POLICIES.bundle}" (enforce)`,
    );
  });

  it('denies under a policy without rfc3161timestamp: a keyless authority then needs a log entry, and the root has no log', async () => {
    expectDenied(
      await create(workloadManifest('Pod', NAMESPACE, 'no-timestamp', images.noTimestamp)),
      `policy "${POLICIES.noTimestamp}" (enforce)`,
      `TrustRoot "${TRUST_ROOT}" has no transparency logs`,
      'set rfc3161timestamp',
    );
  });

  it("the recipe's attestation policy: admits a keyless SLSA v1 provenance attestation, denies an image only signed", async () => {
    expectAdmitted(await create(workloadManifest('Pod', NAMESPACE, 'attested', images.attested)));
    expectDenied(
      await create(workloadManifest('Pod', NAMESPACE, 'not-attested', images.notAttested)),
      `policy "${POLICIES.provenance}" (enforce)`,
      SLSA_V1,
    );
  });

  it('denies an unsigned image', async () => {
    expectDenied(
      await create(workloadManifest('Pod', NAMESPACE, 'unsigned', images.legacyUnsigned)),
      `policy "${POLICIES.legacy}" (enforce)`,
      'no signature found',
    );
  });
});
