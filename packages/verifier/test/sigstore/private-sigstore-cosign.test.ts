// Keyless signatures by the real cosign through a real private Sigstore (the testbed's Fulcio,
// timestamp authority and Rekor v2 on loopback, an OIDC issuer minting the tokens), verified by
// the verifier against that Sigstore's TrustedRoot: with a log (cosign 3's bundle with a Rekor v2
// entry: inclusion proof and signed checkpoint, no integrated time, so the TSA dates it), and
// without one (GitHub's shape: certificate and RFC 3161 timestamp only).
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseReference } from '@signet/core';
import { parseClusterImagePolicy } from '@signet/k8s-types';
import { RegistryClient } from '@signet/registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImageVerifier } from '../../src/image-verifier.js';
import { type CompiledAuthorities, compileAuthorities } from '../../src/policy/compile.js';
import { trustRootResolver } from '../../src/trust/compile.js';
import { trustRootFromJSON } from '../../src/trust/trusted-root.js';
import { ensureTestTools, loadTestbed, type Testbed } from '../support/registry-helpers.js';

const WORKFLOW = { repository: 'acme/app', workflowPath: '.github/workflows/release.yml' };
const SAN = 'https://github.com/acme/app/.github/workflows/release.yml@refs/heads/main';

describe('keyless cosign signatures from a real private Sigstore', () => {
  let testbed: typeof Testbed;
  let group: Testbed.ProcessGroup;
  let registry: Testbed.Registry;
  let cosign: Testbed.Cosign;
  let crane = '';
  let logged: Testbed.PrivateSigstore;
  let unlogged: Testbed.PrivateSigstore;
  let verifier: ImageVerifier;

  beforeAll(async () => {
    testbed = await loadTestbed();
    ({ crane } = await ensureTestTools(testbed, ['crane', 'cosign', 'oci-registry', 'fulcio']));
    group = new testbed.ProcessGroup({ runDir: await testbed.createRunDir('signet-private-cosign-') });
    [logged, unlogged, registry] = await Promise.all([
      testbed.startPrivateSigstore({ group, rekor: true }),
      testbed.startPrivateSigstore({ group }),
      testbed.startRegistry({ referrers: true, group }),
    ]);
    cosign = await testbed.createCosign({ workDir: group.runDir });
    verifier = new ImageVerifier({ registry: new RegistryClient({ insecureHosts: [registry.host] }) });
  }, 30 * 60_000);

  afterAll(async () => {
    await logged?.stop();
    await unlogged?.stop();
    await group?.stopAll();
    if (group && !process.env.SIGNET_KEEP_RUN_DIR) await rm(group.runDir, { recursive: true, force: true });
  });

  async function signed(sigstore: Testbed.PrivateSigstore, name: string): Promise<string> {
    const dir = join(group.runDir, name);
    const files = await sigstore.writeFiles(dir);
    const identityTokenFile = join(dir, 'token');
    await writeFile(identityTokenFile, sigstore.issuer.mintToken(testbed.workflowClaims(WORKFLOW)));
    const digest = await testbed.pushRandomImage(registry, `private/${name}`, 'v1', {
      crane,
      workDir: group.runDir,
    });
    const image = `${registry.host}/private/${name}@${digest}`;
    await cosign.signKeyless(
      image,
      {
        identityTokenFile,
        fulcioUrl: sigstore.fulcio.url,
        timestampUrl: sigstore.timestampAuthority.timestampUrl,
        ...files,
      },
      'bundle',
    );
    return image;
  }

  let revisions = 0;
  /** A keyless policy for the workflow, trusting `sigstore`, with a log (`ctlog`) or a timestamp. */
  async function policy(
    sigstore: Testbed.PrivateSigstore,
    evidence: 'log' | 'timestamp',
  ): Promise<CompiledAuthorities> {
    const name = 'private';
    const cip = parseClusterImagePolicy({
      apiVersion: 'policy.sigstore.dev/v1beta1',
      kind: 'ClusterImagePolicy',
      metadata: { name: 'private-sigstore' },
      spec: {
        images: [{ glob: '**' }],
        authorities: [
          {
            keyless: {
              trustRootRef: name,
              insecureIgnoreSCT: true,
              identities: [{ issuer: sigstore.issuer.url, subject: SAN }],
            },
            ...(evidence === 'log'
              ? { ctlog: { trustRootRef: name } }
              : { rfc3161timestamp: { trustRootRef: name } }),
            signatureFormat: 'bundle',
          },
        ],
      },
    });
    const root = trustRootFromJSON(sigstore.trustedRoot, { name });
    const revision = `private-sigstore@${++revisions}`;
    return compileAuthorities(cip, { trustRoots: trustRootResolver([root]), revision: () => revision });
  }

  async function check(image: string, toVerify: CompiledAuthorities) {
    const result = await verifier.verifyImage(
      { reference: parseReference(image), policies: [toVerify] },
      { signal: new AbortController().signal, deadline: Date.now() + 30_000 },
    );
    return result.checks[0];
  }

  /** The code of the first artifact error behind a failed policy's only authority. */
  function causeCode(result: Awaited<ReturnType<typeof check>>): string | undefined {
    const authority = result?.authorities[0];
    if (authority === undefined || authority.passed) return undefined;
    return (authority.failure.cause as { code?: string } | undefined)?.code;
  }

  it('verifies the Rekor v2 entry (inclusion proof, checkpoint) and the TSA timestamp of a logged signature', async () => {
    const image = await signed(logged, 'logged');
    expect(await check(image, await policy(logged, 'log'))).toMatchObject({ passed: true });
    // Another Sigstore's root trusts neither its certificate nor its timestamp.
    const other = await check(image, await policy(unlogged, 'timestamp'));
    expect(other).toMatchObject({ passed: false });
    expect(['CERTIFICATE_ERROR', 'TIMESTAMP_ERROR']).toContain(causeCode(other));
  });

  it('verifies a signature without a log entry under rfc3161timestamp, and refuses it when the log is required', async () => {
    const image = await signed(unlogged, 'unlogged');
    expect(await check(image, await policy(unlogged, 'timestamp'))).toMatchObject({ passed: true });
    const withLog = await check(image, await policy(logged, 'log'));
    expect(withLog).toMatchObject({ passed: false });
    expect(causeCode(withLog)).toBe('TLOG_MISSING');
  });
});
