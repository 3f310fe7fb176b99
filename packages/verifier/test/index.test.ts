// Pins the package's runtime surface: a change here is a change of the published API, and
// belongs in a changeset. Keep it to what a caller needs to verify images.
import { expect, test } from 'vitest';
import * as verifier from '../src/index.js';

test('the public runtime exports are exactly these', () => {
  expect(Object.keys(verifier).sort()).toEqual([
    'ImageVerifier',
    'Keychain',
    'PolicyCompileError',
    'PullSecretError',
    'RegistryClient',
    'RegistryError',
    'RemotePolicyError',
    'SignatureCheckError',
    'TrustRootError',
    'VerificationCache',
    'compileAuthorities',
    'createDispatcher',
    'credentialsFromDockerConfig',
    'credentialsFromSecret',
    'dispatchFetch',
    'isInfrastructureFailure',
    'proxySettings',
    'remotePolicyFetcher',
    'trustRootFromJSON',
    'trustRootResolver',
  ]);
});
