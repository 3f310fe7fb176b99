// Pins the package's runtime surface: a change here is a change of the published API, and
// belongs in a changeset. Keep it to what a caller needs to verify images; the registry client,
// credentials and the outbound network are @signet/registry's.
import { expect, test } from 'vitest';

test('the public runtime exports are exactly these', async () => {
  expect(Object.keys(await import('../src/index.js')).sort()).toEqual([
    'CelWorkers',
    'ImageVerifier',
    'KmsKeyStore',
    'LivingTrustRoot',
    'PolicyCompileError',
    'RemoteTrustRoots',
    'SIGNATURE_FORMATS',
    'TrustRootError',
    'VerificationCache',
    'compileAuthorities',
    'compileImagePolicyAuthorities',
    'livingPublicGoodRoot',
    'remotePolicyFetcher',
    'trustRootFromJSON',
    'trustRootResolver',
  ]);
});
