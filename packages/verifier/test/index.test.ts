// Pins the package's runtime surface: a change here is a change of the published API, and
// belongs in a changeset. Keep it to what a caller needs to verify images.
import { expect, test } from 'vitest';
import * as verifier from '../src/index.js';

test('the public runtime exports are exactly these', () => {
  expect(Object.keys(verifier).sort()).toEqual([
    'AcrCredentials',
    'CLOUD_PROVIDER_NAMES',
    'CelSyntaxError',
    'CelWorkers',
    'CelWorkersError',
    'DEFAULT_CEL_COST_LIMIT',
    'EcrCredentials',
    'GcpCredentials',
    'ImageVerifier',
    'Keychain',
    'KmsKeyError',
    'KmsKeyStore',
    'LivingTrustRoot',
    'PolicyCompileError',
    'PullSecretError',
    'RegistryClient',
    'RegistryError',
    'RemotePolicyError',
    'RemoteTrustRoots',
    'SignatureCheckError',
    'TagCache',
    'TrustRootError',
    'UnreachableError',
    'VerificationCache',
    'compileAuthorities',
    'compileImagePolicyAuthorities',
    'createCloudProviders',
    'createDispatcher',
    'credentialsFromDockerConfig',
    'credentialsFromSecret',
    'dispatchFetch',
    'isCloudProviderName',
    'isInfrastructureFailure',
    'isTransportFailure',
    'livingPublicGoodRoot',
    'proxySettings',
    'remotePolicyFetcher',
    'trustRootFromJSON',
    'trustRootResolver',
    'unreachable',
  ]);
});
