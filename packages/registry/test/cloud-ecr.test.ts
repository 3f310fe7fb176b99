// ECR credentials with IRSA, end to end against real programs (see `helpers/ecr-registry.ts`):
// moto serves STS and ECR, the real AWS SDK runs its default credential chain, CNCF distribution
// asks for the credentials moto hands out. The verification of a signed image through them is in
// @signet/verifier's `test/cloud-ecr.test.ts`.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryClient } from '../src/client.js';
import { EcrCredentials, ecrRegistryOf } from '../src/cloud/ecr.js';
import { RegistryError } from '../src/errors.js';
import {
  ACCOUNT,
  ECR_PASSWORD,
  type EcrRegistryBed,
  MOTO_EXPIRY,
  startEcrRegistry,
} from './helpers/ecr-registry.js';
import { callWithin } from './helpers/server.js';

const SETUP_TIMEOUT = 30 * 60_000;

describe('ECR credentials through IRSA, against moto and a real registry', () => {
  let bed: EcrRegistryBed;
  let registryHost = '';
  let imageRef = '';
  let runDir = '';
  let registryOf: EcrRegistryBed['registryOf'];
  let apiRequests: EcrRegistryBed['apiRequests'];

  beforeAll(async () => {
    bed = await startEcrRegistry('signet-verifier-ecr-');
    ({ registryHost, imageRef, runDir, registryOf, apiRequests } = bed);
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await bed?.stop();
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
    const proxy = await bed.testbed.startHttpProxy({ group: bed.group });
    const ecr = new EcrCredentials({ registryOf, env: { HTTP_PROXY: proxy.url } });
    const credential = await ecr.credentialFor(
      { registry: registryHost, repository: 'team/app' },
      { transport: new RegistryClient().transport, call: callWithin(10_000) },
    );
    expect(credential).toMatchObject({ username: 'AWS' });
    // the forward proxy forwarded the SDK's requests to moto: AssumeRoleWithWebIdentity, then GetAuthorizationToken.
    expect((await proxy.targets()).filter((target) => target === new URL(bed.moto.url).host)).toHaveLength(2);
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
