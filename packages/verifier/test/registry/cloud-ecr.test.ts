// ECR credentials with IRSA, end to end against real programs: moto in server mode serves AWS STS
// (AssumeRoleWithWebIdentity) and ECR (GetAuthorizationToken); the real AWS SDK runs its default
// credential chain from the same environment variables EKS sets for IRSA; CNCF distribution asks
// for Basic credentials, with the user and password moto's GetAuthorizationToken hands out, and
// serves an image signed by the real cosign. Only the mapping of the loopback registry host to an
// ECR registry ID is test-specific (real ECR hosts are `<account>.dkr.ecr.<region>.amazonaws.com`).
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseReference } from '@signet/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImageVerifier } from '../../src/image-verifier.js';
import { compileAuthorities } from '../../src/policy/compile.js';
import { RegistryClient } from '../../src/registry/client.js';
import { EcrCredentials, ecrRegistryOf } from '../../src/registry/cloud/ecr.js';
import { RegistryError } from '../../src/registry/errors.js';
import { clusterImagePolicy } from '../support/policies.js';
import { callWithin } from './helpers/server.js';
import { ensureTestTools, loadTestbed, type Testbed } from './helpers/testbed.js';

const SETUP_TIMEOUT = 30 * 60_000;
/** moto's default account, and the password its GetAuthorizationToken issues for it. */
const ACCOUNT = '123456789012';
const ECR_PASSWORD = `${ACCOUNT}-auth-token`;
/** moto's tokens expire at this fixed time (2015-01-01T00:00:00Z). */
const MOTO_EXPIRY = Date.UTC(2015, 0, 1);

describe('ECR credentials through IRSA, against moto and a real registry', () => {
  let testbed: typeof Testbed;
  let group: Testbed.ProcessGroup | undefined;
  let runDir = '';
  let moto: Testbed.Moto;
  let registryHost = '';
  let imageRef = '';
  let publicKey = '';
  const saved = { ...process.env };

  const registryOf = (host: string) =>
    host === registryHost
      ? ({ kind: 'private', registryId: ACCOUNT, region: 'us-east-1' } as const)
      : undefined;

  beforeAll(async () => {
    testbed = await loadTestbed();
    const { crane } = await ensureTestTools(testbed, ['registry', 'crane', 'cosign']);
    runDir = await testbed.createRunDir('signet-verifier-ecr-');
    group = new testbed.ProcessGroup({ runDir, graceMs: 2_000 });
    moto = await testbed.startMoto({ group });
    // Pushed and signed while open, then served with Basic auth from the same storage.
    const open = await testbed.startRegistry({ referrers: false, group });
    registryHost = open.host;
    const digest = await testbed.pushRandomImage(open, 'team/app', 'v1', { crane, workDir: runDir });
    imageRef = `${open.host}/team/app@${digest}`;
    const cosign = await testbed.createCosign({ workDir: runDir });
    const key = await cosign.generateKeyPair(join(runDir, 'keys'), 'pw');
    await cosign.signLegacyKeyed(imageRef, key);
    publicKey = await readFile(key.publicKey, 'utf8');
    await open.stop();
    const htpasswd = join(runDir, 'htpasswd');
    await testbed.writeHtpasswd(htpasswd, { AWS: ECR_PASSWORD });
    await testbed.startRegistry({
      referrers: false,
      group,
      port: Number(registryHost.split(':')[1]),
      htpasswdFile: htpasswd,
    });

    // What EKS puts into a Pod whose ServiceAccount has an eks.amazonaws.com/role-arn annotation.
    const tokenFile = join(runDir, 'eks.amazonaws.com', 'serviceaccount', 'token');
    await mkdir(join(tokenFile, '..'), { recursive: true });
    await writeFile(
      tokenFile,
      'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6c2lnbmV0OnNpZ25ldCJ9.c2ln',
    );
    for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
    Object.assign(process.env, {
      // The testbed's tool cache stays where it is (it is found under HOME), for the proxy test.
      SIGNET_CACHE_DIR: testbed.cacheRoot(),
      HOME: runDir,
      AWS_ROLE_ARN: `arn:aws:iam::${ACCOUNT}:role/signet`,
      AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL: moto.url,
      AWS_EC2_METADATA_DISABLED: 'true',
    });
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    process.env = saved;
    await group?.stopAll();
    if (runDir !== '' && !process.env.SIGNET_KEEP_RUN_DIR) await rm(runDir, { recursive: true, force: true });
  });

  /** AWS API requests moto has answered so far (its request log). */
  const apiRequests = async () =>
    ((await moto.process.log()).match(/"POST \/ HTTP\/1\.1" 200/g) ?? []).length;

  it('verifies a Pod image in ECR with credentials from the web identity role', async () => {
    const ecr = new EcrCredentials({ registryOf });
    const registry = new RegistryClient({ insecureHosts: [registryHost], credentialProviders: [ecr] });
    const cip = clusterImagePolicy([{ name: 'release-key', key: { data: publicKey } }], {
      images: [{ glob: '**' }],
    });
    const policy = {
      name: 'release',
      mode: 'enforce' as const,
      revision: 'r1',
      compiled: await compileAuthorities(cip),
    };
    const result = await new ImageVerifier({ registry }).verifyImage(
      {
        path: 'spec.containers[0].image',
        image: imageRef,
        reference: parseReference(imageRef),
        policies: [policy],
      },
      { signal: new AbortController().signal, deadline: Date.now() + 20_000 },
    );
    expect(result.checks[0]).toMatchObject({ passed: true, authority: 'release-key' });
    // STS AssumeRoleWithWebIdentity, then ECR GetAuthorizationToken.
    expect(await apiRequests()).toBeGreaterThanOrEqual(2);
  });

  it('is refused by the registry without the ECR credentials', async () => {
    const registry = new RegistryClient({ insecureHosts: [registryHost] });
    const error = await registry
      .getManifest(
        { registry: registryHost, repository: 'team/app' },
        imageRef.split('@')[1] as string,
        callWithin(10_000),
      )
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('keeps a token until shortly before it expires, and asks again after that', async () => {
    const repository = { registry: registryHost, repository: 'team/app' };
    const context = () => ({ transport: new RegistryClient().transport, call: callWithin(10_000) });
    // A clock an hour before moto's fixed expiry: the token is kept (renewal 15 minutes before).
    let now = MOTO_EXPIRY - 60 * 60_000;
    const ecr = new EcrCredentials({ registryOf, now: () => now });
    const first = await ecr.credentialFor(repository, context());
    expect(first).toEqual({ kind: 'basic', username: 'AWS', password: ECR_PASSWORD });
    const before = await apiRequests();
    await Promise.all([ecr.credentialFor(repository, context()), ecr.credentialFor(repository, context())]);
    expect(await apiRequests()).toBe(before);
    now = MOTO_EXPIRY - 10 * 60_000;
    await ecr.credentialFor(repository, context());
    expect(await apiRequests()).toBe(before + 1);
  });

  it('sends the AWS API calls (STS and ECR) through HTTP_PROXY', async () => {
    const proxy = await testbed.startHttpProxy({ group: group as Testbed.ProcessGroup });
    const ecr = new EcrCredentials({ registryOf, env: { HTTP_PROXY: proxy.url } });
    const credential = await ecr.credentialFor(
      { registry: registryHost, repository: 'team/app' },
      { transport: new RegistryClient().transport, call: callWithin(10_000) },
    );
    expect(credential).toMatchObject({ username: 'AWS' });
    // the forward proxy forwarded the SDK's requests to moto: AssumeRoleWithWebIdentity, then GetAuthorizationToken.
    expect((await proxy.targets()).filter((target) => target === new URL(moto.url).host)).toHaveLength(2);
  });

  it('fails as an infrastructure failure naming the provider and the cause', async () => {
    delete process.env.AWS_ROLE_ARN;
    delete process.env.AWS_WEB_IDENTITY_TOKEN_FILE;
    try {
      const ecr = new EcrCredentials({ registryOf });
      const registry = new RegistryClient({ insecureHosts: [registryHost], credentialProviders: [ecr] });
      const error = (await registry
        .resolveDigest({ registry: registryHost, repository: 'team/app', tag: 'v1' }, callWithin(10_000))
        .catch((caught: unknown) => caught)) as RegistryError;
      expect(error).toBeInstanceOf(RegistryError);
      expect(error.code).toBe('CREDENTIALS_FAILED');
      expect(error.message).toMatch(
        new RegExp(
          `^registry ${registryHost} repository team/app: ECR credentials: GetAuthorizationToken failed: .*credentials`,
          'i',
        ),
      );
    } finally {
      process.env.AWS_ROLE_ARN = `arn:aws:iam::${ACCOUNT}:role/signet`;
      process.env.AWS_WEB_IDENTITY_TOKEN_FILE = join(runDir, 'eks.amazonaws.com', 'serviceaccount', 'token');
    }
  });
});

describe('ECR registry hosts', () => {
  it.each([
    [
      '123456789012.dkr.ecr.eu-west-1.amazonaws.com',
      { kind: 'private', registryId: '123456789012', region: 'eu-west-1' },
    ],
    [
      '123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com',
      { kind: 'private', registryId: '123456789012', region: 'us-gov-west-1' },
    ],
    [
      '123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn',
      { kind: 'private', registryId: '123456789012', region: 'cn-north-1' },
    ],
    [
      '123456789012.dkr-ecr.eu-west-1.on.aws',
      { kind: 'private', registryId: '123456789012', region: 'eu-west-1' },
    ],
    ['public.ecr.aws', { kind: 'public' }],
    ['123456789012.dkr.ecr.eu-west-1.amazonaws.com.evil.example', undefined],
    ['evil.example/123456789012.dkr.ecr.eu-west-1.amazonaws.com', undefined],
    ['gcr.io', undefined],
  ])('%s', (host, expected) => {
    expect(ecrRegistryOf(host)).toEqual(expected);
  });

  it('applies to public ECR unless told not to, and to nothing else', () => {
    expect(new EcrCredentials().handles('public.ecr.aws')).toBe(true);
    expect(new EcrCredentials({ publicEcr: false }).handles('public.ecr.aws')).toBe(false);
    expect(new EcrCredentials().handles('registry.example')).toBe(false);
  });
});
