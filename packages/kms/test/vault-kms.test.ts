// hashivault:// keys. HashiCorp Vault does not build from the Go module proxy (its root module
// replaces its api/sdk modules with in-repository copies that match no published version), so a
// loopback server STANDS IN for Vault's transit engine, speaking its HTTP API
// (tools/testbed/python/vault_transit.py). The real cosign signs through it (`cosign sign --key
// hashivault://<key>`: the digest goes to the transit sign endpoint, the private key never leaves
// the server) and Signet reads the public key over the same API, with a token or the Kubernetes
// auth method's login.
import * as testbed from '@signet/testbed';
import { KmsKeyStore } from '@signet/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKmsKeyFetcher } from '../src/index.js';
import { type Bench, failure, kmsPolicy, progress, SETUP_TIMEOUT, startBench } from './support.js';

describe('hashivault:// keys against a Vault transit stand-in', () => {
  let bench: Bench;
  let vault: testbed.Vault;

  beforeAll(async () => {
    bench = await startBench('signet-kms-vault-');
    vault = await testbed.startVault({
      group: bench.group,
      kubernetesRoles: { signet: 'service-account-jwt' },
      onProgress: progress,
    });
    await vault.api('POST', 'transit/keys/release', { type: 'ecdsa-p256' });
  }, SETUP_TIMEOUT);

  afterAll(async () => bench?.stop());

  it('verifies what cosign signed through Vault, and picks up a rotated key on refresh', async () => {
    const image = await bench.push('team/vault');
    await bench.cosign.signWithKms(image, 'hashivault://release', vault.clientEnv);
    const store = new KmsKeyStore({
      timeoutMs: 30_000,
      fetcher: createKmsKeyFetcher({ env: vault.clientEnv }),
    });
    expect(failure(await bench.verify(kmsPolicy('hashivault://release'), image, store))).toBe('passed');
    // A rotation makes a new latest version; cosign-compatible verification uses the latest key.
    await vault.api('POST', 'transit/keys/release/rotate');
    expect(await store.refresh({ force: true })).toBe(true);
    expect(failure(await bench.verify(kmsPolicy('hashivault://release'), image, store))).toMatch(
      /no valid signature/,
    );
    const resigned = await bench.push('team/vault-rotated');
    await bench.cosign.signWithKms(resigned, 'hashivault://release', vault.clientEnv);
    expect(failure(await bench.verify(kmsPolicy('hashivault://release'), resigned, store))).toBe('passed');
  });

  it("logs in with the Kubernetes auth method and the Pod's service-account token", async () => {
    const { writeFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const tokenFile = join(bench.runDir, 'sa-token');
    await writeFile(tokenFile, 'service-account-jwt\n');
    const env = { VAULT_ADDR: vault.address, VAULT_KUBERNETES_ROLE: 'signet' };
    const store = new KmsKeyStore({
      fetcher: createKmsKeyFetcher({ env, serviceAccountTokenFile: tokenFile }),
    });
    expect((await store.lookup('hashivault://release')).kind).toBe('ready');
    await writeFile(tokenFile, 'another-jwt');
    const refused = new KmsKeyStore({
      fetcher: createKmsKeyFetcher({ env, serviceAccountTokenFile: tokenFile }),
    });
    const got = await refused.lookup('hashivault://release');
    expect(got.kind === 'unavailable' && got.error.message).toMatch(/Vault answered 403/);
  });

  it('says what is missing without a token, and what Vault answered for an unknown key', async () => {
    const noToken = new KmsKeyStore({
      fetcher: createKmsKeyFetcher({ env: { VAULT_ADDR: vault.address, HOME: bench.runDir } }),
    });
    const refused = await noToken.lookup('hashivault://release');
    expect(refused.kind === 'unavailable' && refused.error.message).toMatch(/no Vault token/);
    const store = new KmsKeyStore({
      timeoutMs: 30_000,
      fetcher: createKmsKeyFetcher({ env: vault.clientEnv }),
    });
    const unknown = await store.lookup('hashivault://nothing-here');
    expect(unknown.kind === 'unavailable' && unknown.error.message).toMatch(/Vault answered 404/);
  });
});
