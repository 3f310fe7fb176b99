// policy-controller's own KMS policies, read at test time from its Go module (v0.15.1) in the
// module cache, compiled by Signet and verified against signatures the real cosign made through a
// real AWS KMS API (moto's server, over https with a test certificate). What is changed in each
// policy, and why, is said where it is done: placeholder key IDs and template fields are filled in
// with the key moto created, and `localhost:4566` (LocalStack's port, outside the ports these tests
// may bind) becomes moto's port.
import { readdir, readFile } from 'node:fs/promises';
import { Agent } from 'node:https';
import { join } from 'node:path';
import { CreateAliasCommand, CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { PolicyParseError, parseClusterImagePolicy } from '@signet/k8s-types';
import * as testbed from '@signet/testbed';
import { KmsKeyStore } from '@signet/verifier';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { createKmsKeyFetcher } from '../src/index.js';
import { type Bench, failure, SETUP_TIMEOUT, startBench } from './support.js';

const ACCOUNT = '111122223333';
const REGION = 'us-east-2';
const PLACEHOLDER_KEY = '1234abcd-12ab-34cd-56ef-1234567890ab';

interface PolicyFile {
  readonly path: string;
  readonly documents: unknown[];
}

async function yamlFiles(root: string, dirs: readonly string[]): Promise<PolicyFile[]> {
  const files: PolicyFile[] = [];
  for (const dir of dirs) {
    for (const name of (await readdir(join(root, dir))).filter((n) => n.endsWith('.yaml')).sort()) {
      const text = await readFile(join(root, dir, name), 'utf8');
      files.push({ path: `${dir}/${name}`, documents: parseAllDocuments(text).map((d) => d.toJS()) });
    }
  }
  return files;
}

const usesKms = (file: PolicyFile) => JSON.stringify(file.documents).includes('"kms":');

describe("policy-controller's KMS policies, verified against cosign signatures made through moto", () => {
  let bench: Bench;
  let moto: testbed.Moto;
  let files: PolicyFile[] = [];
  let keyId = '';
  let signed = '';
  let unsigned = '';
  let store: KmsKeyStore;
  let rewrite: (text: string) => string = (text) => text;

  beforeAll(async () => {
    const root = await testbed.policyControllerModule();
    files = (
      await yamlFiles(root, [
        'test/testdata/policy-controller/valid',
        'test/testdata/policy-controller/invalid',
        'test/testdata/policy-controller/e2e',
        'examples/policies',
      ])
    ).filter(usesKms);
    bench = await startBench('signet-kms-pc-');
    const tls = await testbed.mintServerCertificate(bench.runDir, 'moto');
    moto = await testbed.startMoto({
      group: bench.group,
      accountId: ACCOUNT,
      region: REGION,
      tls,
      kmsDigests: true,
    });
    const endpointUrl = `https://localhost:${moto.endpoint.split(':')[1]}`;
    Object.assign(process.env, moto.clientEnv, { AWS_ENDPOINT_URL_KMS: endpointUrl });
    const kms = new KMSClient({
      endpoint: endpointUrl,
      region: REGION,
      requestHandler: new NodeHttpHandler({ httpsAgent: new Agent({ ca: tls.pem }) }),
    });
    const created = await kms.send(
      new CreateKeyCommand({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' }),
    );
    keyId = created.KeyMetadata?.KeyId ?? '';
    await kms.send(new CreateAliasCommand({ AliasName: 'alias/ExampleAlias', TargetKeyId: keyId }));
    kms.destroy();
    const port = moto.endpoint.split(':')[1] ?? '';
    rewrite = (text) =>
      text
        .replaceAll(PLACEHOLDER_KEY, keyId)
        .replaceAll('localhost:4566', `localhost:${port}`)
        // examples/policies/signed-by-aws-kms-key.yaml is a template: its fields filled in.
        .replaceAll('<< region >>', REGION)
        .replaceAll('<< account id >>', ACCOUNT)
        .replaceAll('<< key id >>', keyId);
    signed = await bench.push('team/pc-kms-signed');
    unsigned = await bench.push('team/pc-kms-unsigned');
    await bench.cosign.signWithKms(signed, `awskms:///arn:aws:kms:${REGION}:${ACCOUNT}:key/${keyId}`, {
      ...moto.clientEnv,
      AWS_ENDPOINT_URL_KMS: endpointUrl,
      SSL_CERT_FILE: tls.certPath,
    });
    // Their URIs name `localhost:4566` (now moto's port): listed, as an operator lists LocalStack.
    store = new KmsKeyStore({
      timeoutMs: 30_000,
      fetcher: createKmsKeyFetcher({ endpoints: [`localhost:${port}`], aws: { ca: tls.pem } }),
    });
  }, SETUP_TIMEOUT);

  afterAll(async () => bench?.stop());

  it('finds the KMS policies in the module', () => {
    expect(files.map((f) => f.path)).toEqual(
      expect.arrayContaining([
        'test/testdata/policy-controller/valid/valid-keyref-awskms.yaml',
        'test/testdata/policy-controller/valid/v1beta1-valid-keyref-awskms.yaml',
        'examples/policies/signed-by-aws-kms-key.yaml',
      ]),
    );
  });

  it('verifies every AWS KMS authority of the valid policies, one by one, and refuses unsigned images', async () => {
    const valid = files.filter((f) => f.path.includes('/valid/') && f.path.includes('keyref-awskms'));
    expect(valid).toHaveLength(2);
    let authorities = 0;
    for (const file of valid) {
      for (const document of file.documents) {
        const cip = parseClusterImagePolicy(JSON.parse(rewrite(JSON.stringify(document))));
        for (const [index, authority] of cip.spec.authorities.entries()) {
          const single = { ...cip, spec: { ...cip.spec, authorities: [authority] } };
          const where = `${file.path} authorities[${index}] (${authority.key?.kms})`;
          expect(failure(await bench.verify(single, signed, store)), where).toBe('passed');
          expect(failure(await bench.verify(single, unsigned, store)), where).toMatch(/no signature/);
          authorities += 1;
        }
      }
    }
    expect(authorities).toBe(8);
  });

  it('verifies the AWS KMS example once its template fields are filled in', async () => {
    const file = files.find((f) => f.path === 'examples/policies/signed-by-aws-kms-key.yaml');
    const document = JSON.parse(rewrite(JSON.stringify(file?.documents[0])));
    // The example also names the public Rekor (`ctlog.url: https://rekor.sigstore.dev`): that
    // requires an entry in the public log, which cannot be made here. As written, Signet (like
    // policy-controller) refuses a signature without one; without `ctlog`, the KMS key verifies.
    expect(failure(await bench.verify(parseClusterImagePolicy(document), signed, store))).toMatch(
      /no valid signature: 1 found, 0 verified/,
    );
    delete document.spec.authorities[0].ctlog;
    expect(failure(await bench.verify(parseClusterImagePolicy(document), signed, store))).toBe('passed');
  });

  it('refuses the invalid KMS policies at parse time, naming the field', () => {
    const invalid = files.filter((f) => f.path.includes('/invalid/'));
    expect(invalid.length).toBeGreaterThanOrEqual(6);
    for (const file of invalid) {
      for (const document of file.documents) {
        expect(() => parseClusterImagePolicy(document), file.path).toThrow(PolicyParseError);
      }
    }
  });
});
