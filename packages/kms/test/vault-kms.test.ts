// hashivault:// keys against a real HashiCorp Vault (dev server, built from its Go module by the
// testbed) with the transit engine: the real cosign signs through Vault (`cosign sign --key
// hashivault://<key>`, the private key never leaves Vault) and Signet reads the public key over
// Vault's HTTP API, with a token or the Kubernetes auth method's login.
import * as testbed from '@signet/testbed';
import { KmsKeyStore } from '@signet/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKmsKeyFetcher } from '../src/index.js';
import { type Bench, failure, kmsPolicy, progress, SETUP_TIMEOUT, startBench } from './support.js';

describe('hashivault:// keys against Vault', () => {
  let bench: Bench;
  let vault: testbed.Vault;

  beforeAll(async () => {
    bench = await startBench('signet-kms-vault-');
    vault = await testbed.startVault({ group: bench.group, onProgress: progress });
    await vault.api('POST', 'transit/keys/release', { type: 'ecdsa-p256' });
  }, SETUP_TIMEOUT);

  afterAll(async () => bench?.stop());

  it('verifies what cosign signed through Vault, and picks up a rotated key on refresh', async () => {
    const image = await bench.push('team/vault');
    await bench.cosign.signWithKms(image, 'hashivault://release', vault.clientEnv);
    const store = new KmsKeyStore({ fetcher: createKmsKeyFetcher({ env: vault.clientEnv }) });
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

  it('says what is missing without a token, and what Vault answered for an unknown key', async () => {
    const noToken = new KmsKeyStore({
      fetcher: createKmsKeyFetcher({ env: { VAULT_ADDR: vault.address, HOME: bench.runDir } }),
    });
    const refused = await noToken.lookup('hashivault://release');
    expect(refused.kind === 'unavailable' && refused.error.message).toMatch(/no Vault token/);
    const store = new KmsKeyStore({ fetcher: createKmsKeyFetcher({ env: vault.clientEnv }) });
    const unknown = await store.lookup('hashivault://nothing-here');
    expect(unknown.kind === 'unavailable' && unknown.error.message).toMatch(/Vault answered 404/);
  });
});
