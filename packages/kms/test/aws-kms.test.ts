// AWS KMS for real: moto's server (PyPI moto 5.2.5, installed into the testbed cache on first use)
// speaks the KMS API on loopback; the real cosign signs through it (`cosign sign --key
// awskms:///<arn>`, the private key never leaves moto) and Signet fetches the public key with the AWS SDK and its default credential chain.
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import * as testbed from '@signet/testbed';
import { type KmsKeyEvent, KmsKeyStore } from '@signet/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKmsKeyFetcher } from '../src/index.js';
import { type Bench, failure, kmsPolicy, SETUP_TIMEOUT, startBench } from './support.js';

const ACCOUNT = '111122223333';
const REGION = 'us-east-2';

describe('awskms:// keys against moto', () => {
  let bench: Bench;
  let moto: testbed.Moto;
  let arn = '';
  let cosignEnv: NodeJS.ProcessEnv = {};

  beforeAll(async () => {
    bench = await startBench('signet-kms-aws-');
    moto = await testbed.startMoto({
      group: bench.group,
      accountId: ACCOUNT,
      region: REGION,
      kmsDigests: true,
    });
    // The AWS SDK reads its credentials, region and endpoint from the environment, as in a Pod.
    Object.assign(process.env, moto.clientEnv, { AWS_ENDPOINT_URL_KMS: moto.url });
    cosignEnv = { ...moto.clientEnv, AWS_ENDPOINT_URL_KMS: moto.url };
    const kms = new KMSClient({ endpoint: moto.url, region: REGION });
    const created = await kms.send(
      new CreateKeyCommand({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' }),
    );
    arn = created.KeyMetadata?.Arn ?? '';
    kms.destroy();
  }, SETUP_TIMEOUT);

  afterAll(async () => bench?.stop());

  it('verifies what cosign signed with the KMS key, and refuses an unsigned image', async () => {
    expect(arn).toMatch(new RegExp(`^arn:aws:kms:${REGION}:${ACCOUNT}:key/`));
    const uri = `awskms:///${arn}`;
    const signed = await bench.push('team/aws-signed');
    const unsigned = await bench.push('team/aws-unsigned');
    await bench.cosign.signWithKms(signed, uri, cosignEnv);
    const events: KmsKeyEvent[] = [];
    const store = new KmsKeyStore({
      timeoutMs: 30_000,
      fetcher: createKmsKeyFetcher(),
      onEvent: (e) => events.push(e),
    });
    const check = await bench.verify(kmsPolicy(uri), signed, store);
    expect(failure(check)).toBe('passed');
    expect(failure(await bench.verify(kmsPolicy(uri), unsigned, store))).toMatch(/no signature/);
    // Fetched once, when the policy was first compiled; the second compile used the kept key.
    expect(events.map((e) => e.kind)).toEqual(['fetched']);
  });

  it('keeps the last good key through a KMS outage, says so, and fetches again when it is back', async () => {
    const uri = `awskms:///${arn}`;
    const signed = await bench.push('team/aws-outage');
    await bench.cosign.signWithKms(signed, uri, cosignEnv);
    const events: KmsKeyEvent[] = [];
    const store = new KmsKeyStore({
      fetcher: createKmsKeyFetcher(),
      onEvent: (e) => events.push(e),
      timeoutMs: 3_000,
    });
    expect(failure(await bench.verify(kmsPolicy(uri), signed, store))).toBe('passed');
    await moto.process.stop();
    expect(await store.refresh({ force: true })).toBe(false);
    const failed = events.at(-1);
    expect(failed?.kind).toBe('failed');
    expect(failed?.kind === 'failed' && failed.lastGoodAt).toBeInstanceOf(Date);
    const kept = await store.lookup(uri);
    expect(kept.kind === 'ready' && kept.stale?.message).toMatch(/cannot fetch the public key/);
    expect(failure(await bench.verify(kmsPolicy(uri), signed, store))).toBe('passed');
    // A store that never had the key reports the outage as an infrastructure failure.
    const cold = new KmsKeyStore({ fetcher: createKmsKeyFetcher(), timeoutMs: 3_000 });
    const check = await bench.verify(kmsPolicy(uri), signed, cold);
    expect(check.passed).toBe(false);
    expect(!check.passed && check.failure.kind).toBe('infrastructure');
    expect(failure(check)).toMatch(/KMS key awskms:.*cannot fetch the public key/);
  });
});
