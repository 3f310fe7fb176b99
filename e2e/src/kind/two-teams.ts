// Two teams in one kind cluster, each with its own ImagePolicy on top of the cluster's
// ClusterImagePolicy: team-a's release workflow signs keyless (a private Sigstore on the host: an
// OIDC issuer, Fulcio and a timestamp authority; the cluster trusts it through a TrustRoot the
// cluster admin applies), team-b signs with its own key, kept in a Secret of team-b. team-b has a
// time-boxed exception for one hand-built hotfix. What the admission contract's N-rows say is
// observed with real Pods, through Signet installed from its image and chart.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type KeylessSigner,
  type PrivateSigstore,
  startPrivateSigstore,
  workflowClaims,
} from '@signet/testbed';
import { createNamespace } from '../scenarios/kube.js';
import { INCLUDE_LABEL } from '../scenarios/rollout.js';
import type { KindCluster } from './kind-cluster.js';
import type { KindTestImages } from './kind-images.js';

export const TEAM_A = 'team-a';
export const TEAM_B = 'team-b';
const TRUST_ROOT = 'acme-sigstore';
export const TEAM_A_RELEASE = {
  repository: 'acme-team-a/app',
  workflowPath: '.github/workflows/release.yml',
};
const TEAM_A_FORK = { repository: 'someone/app', workflowPath: '.github/workflows/release.yml' };

/** The images of the scenario, all in the repository the ClusterImagePolicy covers. */
export interface TwoTeamsImages {
  /** The cluster's key, and keyless by team-a's release workflow. */
  readonly teamARelease: string;
  /** The cluster's key, and keyless by another repository's workflow through the same Sigstore. */
  readonly teamAFork: string;
  /** The cluster's key and team-b's key. */
  readonly teamBRelease: string;
  /** The cluster's key only: team-b's hotfix, which its exception names by digest. */
  readonly teamBHotfix: string;
  /** team-b's key only: team-b's ImagePolicy passes it, the cluster's does not. */
  readonly teamBOnly: string;
}

export interface TwoTeams {
  readonly images: TwoTeamsImages;
  readonly sigstore: PrivateSigstore;
  /** The objects to apply: TrustRoot, team-b's Secret, both ImagePolicies. */
  readonly objects: readonly object[];
  /** team-b's exception for its hotfix, expiring at `expiresAt` (epoch ms, whole seconds). */
  exception(expiresAt: number): object;
}

/** The TrustRoot of a private Sigstore in the `sigstoreKeys` form: its CA and TSA chains, no log. */
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

/**
 * Starts the private Sigstore, pushes and signs the images, and returns what to apply. The images
 * are runnable (busybox) in the kind registry; `images.push` signs with the cluster's test key.
 */
export async function prepareTwoTeams(cluster: KindCluster, images: KindTestImages): Promise<TwoTeams> {
  const sigstore = await startPrivateSigstore({ group: cluster.group });
  const signer = async (run: typeof TEAM_A_RELEASE, label: string): Promise<KeylessSigner> => {
    const dir = join(cluster.runDir, `sigstore-${label}`);
    const files = await sigstore.writeFiles(dir);
    const identityTokenFile = join(dir, 'token');
    await writeFile(identityTokenFile, sigstore.issuer.mintToken(workflowClaims(run)));
    return {
      identityTokenFile,
      fulcioUrl: sigstore.fulcio.url,
      timestampUrl: sigstore.timestampAuthority.timestampUrl,
      ...files,
    };
  };
  const { cosign } = images;
  const teamBKey = await cosign.generateKeyPair(join(cluster.runDir, 'team-b-key'), 'team-b');
  const [teamARelease, teamAFork, teamBRelease, teamBHotfix, teamBOnly] = await Promise.all([
    images.push('team-a-v1'),
    images.push('team-a-fork'),
    images.push('team-b-v1'),
    images.push('team-b-hotfix'),
    images.push('team-b-only', { signed: false }),
  ]);
  const [release, fork] = await Promise.all([signer(TEAM_A_RELEASE, 'release'), signer(TEAM_A_FORK, 'fork')]);
  await cosign.signKeyless(teamARelease, release, 'bundle');
  await cosign.signKeyless(teamAFork, fork, 'bundle');
  await cosign.signLegacyKeyed(teamBRelease, teamBKey);
  await cosign.signLegacyKeyed(teamBOnly, teamBKey);
  const teamBPem = await readFile(teamBKey.publicKey, 'utf8');
  const glob = `${images.registry.host}/app*`;
  const objects = [
    trustRootOf(sigstore),
    {
      apiVersion: 'policy.signet.dev/v1alpha1',
      kind: 'ImagePolicy',
      metadata: { name: 'release', namespace: TEAM_A },
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
                  issuer: sigstore.issuer.url,
                  subjectRegExp:
                    '^https://github\\.com/acme-team-a/app/\\.github/workflows/release\\.yml@refs/.*$',
                },
              ],
            },
            rfc3161timestamp: { trustRootRef: TRUST_ROOT },
            signatureFormat: 'bundle',
          },
        ],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'release-key', namespace: TEAM_B },
      stringData: { 'cosign.pub': teamBPem },
    },
    {
      apiVersion: 'policy.signet.dev/v1alpha1',
      kind: 'ImagePolicy',
      metadata: { name: 'release', namespace: TEAM_B },
      spec: {
        images: [{ glob }],
        authorities: [{ name: 'team-b-key', key: { secretRef: { name: 'release-key' } } }],
      },
    },
  ];
  await Promise.all(
    [TEAM_A, TEAM_B].map((namespace) => createNamespace(cluster, namespace, { [INCLUDE_LABEL]: 'true' })),
  );
  return {
    images: { teamARelease, teamAFork, teamBRelease, teamBHotfix, teamBOnly },
    sigstore,
    objects,
    exception: (expiresAt) => ({
      apiVersion: 'policy.signet.dev/v1alpha1',
      kind: 'ImagePolicyException',
      metadata: { name: 'hotfix', namespace: TEAM_B },
      spec: {
        images: [{ digest: teamBHotfix.slice(teamBHotfix.indexOf('@') + 1) }],
        policies: [{ kind: 'ImagePolicy', name: 'release' }],
        reason: 'INC-42: hotfix built by hand, re-signed by the release key tomorrow',
        expires: new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      },
    }),
  };
}
