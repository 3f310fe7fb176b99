// An image in ECR verified end to end with credentials from IRSA: the registry's ECR stand-in
// (moto serving STS and ECR, CNCF distribution with the Basic credentials moto hands out, an image
// signed by the real cosign) and the real AWS SDK's default chain; see @signet/registry's
// `test/helpers/ecr-registry.ts`.
import { parseReference } from '@signet/core';
import { EcrCredentials, RegistryClient } from '@signet/registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImageVerifier } from '../src/image-verifier.js';
import { compileAuthorities } from '../src/policy/compile.js';
import { clusterImagePolicy } from './support/policies.js';
import { type EcrRegistryBed, startEcrRegistry } from './support/registry-helpers.js';

const SETUP_TIMEOUT = 30 * 60_000;

describe('ECR credentials through IRSA, against moto and a real registry', () => {
  let bed: EcrRegistryBed;

  beforeAll(async () => {
    bed = await startEcrRegistry('signet-verifier-ecr-');
  }, SETUP_TIMEOUT);

  afterAll(async () => {
    await bed?.stop();
  });

  it('verifies a Pod image in ECR with credentials from the web identity role', async () => {
    const { registryHost, imageRef, publicKey, registryOf, apiRequests } = bed;
    const ecr = new EcrCredentials({ registryOf });
    const registry = new RegistryClient({ insecureHosts: [registryHost], credentialProviders: [ecr] });
    const cip = clusterImagePolicy([{ name: 'release-key', key: { data: publicKey } }], {
      images: [{ glob: '**' }],
    });
    const policy = await compileAuthorities(cip, { revision: () => 'r1' });
    const result = await new ImageVerifier({ registry }).verifyImage(
      {
        reference: parseReference(imageRef),
        policies: [policy],
      },
      { signal: new AbortController().signal, deadline: Date.now() + 20_000 },
    );
    expect(result.checks[0]).toMatchObject({ passed: true, authority: 'release-key' });
    // STS AssumeRoleWithWebIdentity, then ECR GetAuthorizationToken.
    expect(await apiRequests()).toBeGreaterThanOrEqual(2);
  });
});
