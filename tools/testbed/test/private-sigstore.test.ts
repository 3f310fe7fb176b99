import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cosign, createCosign, type KeylessSigner } from '../src/cosign.ts';
import { createRunDir, ProcessGroup } from '../src/process.ts';
import { pushRandomImage, type Registry, startRegistry } from '../src/registry.ts';
import { workflowClaims } from '../src/sigstore/oidc-issuer.ts';
import { type PrivateSigstore, startPrivateSigstore } from '../src/sigstore/private-sigstore.ts';
import { ensureTools } from '../src/tools.ts';

// The real Fulcio and timestamp authority, an OIDC issuer served here, the real cosign signing
// keyless in both formats, and cosign itself verifying what it made against the trusted root.

const WORKFLOW = { repository: 'acme/app', workflowPath: '.github/workflows/release.yml' };
const SAN = 'https://github.com/acme/app/.github/workflows/release.yml@refs/heads/main';

describe('a private Sigstore (Fulcio, TSA, OIDC issuer) for cosign keyless', () => {
  let group: ProcessGroup;
  let sigstore: PrivateSigstore;
  let registry: Registry;
  let cosign: Cosign;
  let signer: KeylessSigner;
  let crane = '';

  beforeAll(async () => {
    group = new ProcessGroup({ runDir: await createRunDir('signet-private-sigstore-') });
    ({ crane } = await ensureTools(['crane', 'cosign']));
    sigstore = await startPrivateSigstore({ group });
    registry = await startRegistry({ referrers: true, group });
    cosign = await createCosign({ workDir: group.runDir });
    const files = await sigstore.writeFiles(join(group.runDir, 'sigstore'));
    const identityTokenFile = join(group.runDir, 'token');
    await writeFile(identityTokenFile, sigstore.issuer.mintToken(workflowClaims(WORKFLOW)));
    signer = {
      identityTokenFile,
      fulcioUrl: sigstore.fulcio.url,
      timestampUrl: sigstore.timestampAuthority.timestampUrl,
      ...files,
    };
  });

  afterAll(async () => {
    await sigstore?.stop();
    await group?.stopAll();
    if (group && !process.env.SIGNET_KEEP_RUN_DIR) await rm(group.runDir, { recursive: true, force: true });
  });

  it('describes itself as GitHub does: one CA, one TSA, no transparency or CT log', () => {
    expect(sigstore.trustedRoot).toMatchObject({
      mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
      tlogs: [],
      ctlogs: [],
      certificateAuthorities: [{ uri: sigstore.fulcio.url }],
      timestampAuthorities: [{ uri: sigstore.timestampAuthority.timestampUrl }],
    });
    expect(sigstore.signingConfig).toMatchObject({
      rekorTlogUrls: [],
      caUrls: [{ url: sigstore.fulcio.url }],
    });
  });

  for (const format of ['bundle', 'legacy'] as const) {
    it(`cosign signs keyless (${format}) with a certificate for the workflow and a timestamp; cosign verifies it`, async () => {
      const digest = await pushRandomImage(registry, `keyless/${format}`, 'v1', {
        crane,
        workDir: group.runDir,
      });
      const image = `${registry.host}/keyless/${format}@${digest}`;
      await cosign.signKeyless(image, signer, format);
      const verified = await cosign.run([
        'verify',
        ...['--trusted-root', signer.trustedRoot, '--certificate-identity', SAN],
        ...[
          '--certificate-oidc-issuer',
          sigstore.issuer.url,
          '--insecure-ignore-tlog',
          '--insecure-ignore-sct',
        ],
        ...['--use-signed-timestamps', '--allow-http-registry', '--allow-insecure-registry'],
        ...(format === 'legacy' ? ['--new-bundle-format=false'] : []),
        image,
      ]);
      expect(verified.stdout).toContain(digest);
    });
  }

  it('with Rekor v2 (POSIX backend): cosign logs the keyless bundle, and verifies it with the log required', async () => {
    const logged = await startPrivateSigstore({ group, rekor: true });
    try {
      expect(logged.trustedRoot).toMatchObject({ tlogs: [{ baseUrl: logged.rekor?.url }] });
      expect(logged.signingConfig).toMatchObject({
        rekorTlogUrls: [{ url: logged.rekor?.url, majorApiVersion: 2 }],
      });
      const dir = join(group.runDir, 'sigstore-rekor');
      const files = await logged.writeFiles(dir);
      const identityTokenFile = join(dir, 'token');
      await writeFile(identityTokenFile, logged.issuer.mintToken(workflowClaims(WORKFLOW)));
      const withLog: KeylessSigner = {
        identityTokenFile,
        fulcioUrl: logged.fulcio.url,
        timestampUrl: logged.timestampAuthority.timestampUrl,
        ...files,
      };
      const digest = await pushRandomImage(registry, 'keyless/logged', 'v1', {
        crane,
        workDir: group.runDir,
      });
      const image = `${registry.host}/keyless/logged@${digest}`;
      await cosign.signKeyless(image, withLog, 'bundle');
      const verified = await cosign.run([
        'verify',
        ...['--trusted-root', withLog.trustedRoot, '--certificate-identity', SAN],
        ...['--certificate-oidc-issuer', logged.issuer.url, '--insecure-ignore-sct'],
        ...['--allow-http-registry', '--allow-insecure-registry', image],
      ]);
      expect(verified.stdout).toContain(digest);
    } finally {
      await logged.stop();
    }
  });

  it('refuses a token its issuer did not sign (Fulcio checks it against the JWKS it fetched)', async () => {
    const other = await startPrivateSigstore({ group });
    try {
      const digest = await pushRandomImage(registry, 'keyless/foreign', 'v1', {
        crane,
        workDir: group.runDir,
      });
      const identityTokenFile = join(group.runDir, 'foreign-token');
      // Same `iss`, another key.
      const forged = other.issuer.mintToken({ ...workflowClaims(WORKFLOW), iss: sigstore.issuer.url });
      await writeFile(identityTokenFile, forged);
      const foreign = { ...signer, identityTokenFile };
      await expect(
        cosign.signKeyless(`${registry.host}/keyless/foreign@${digest}`, foreign, 'bundle'),
      ).rejects.toThrow(/error processing the identity token/);
    } finally {
      await other.stop();
    }
    expect(JSON.parse(await readFile(signer.trustedRoot, 'utf8'))).toEqual(sigstore.trustedRoot);
  });
});
