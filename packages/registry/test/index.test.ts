// Pins the package's runtime surface: a change here is a change of the published API, and
// belongs in a changeset.
import { expect, test } from 'vitest';
import * as registry from '../src/index.js';

test('the public runtime exports are exactly these', () => {
  expect(Object.keys(registry).sort()).toEqual([
    'AcrCredentials',
    'ArtifactDiscovery',
    'BodyTooLargeError',
    'CLOUD_PROVIDER_NAMES',
    'EcrCredentials',
    'GcpCredentials',
    'Keychain',
    'OutboundNetwork',
    'PullSecretError',
    'RegistryClient',
    'RegistryError',
    'SdkNotInstalledError',
    'UnreachableError',
    'cancelQuietly',
    'createCloudProviders',
    'createDispatcher',
    'credentialsFromDockerConfig',
    'credentialsFromSecret',
    'dispatchFetch',
    'fetchConfigFiles',
    'isCloudProviderName',
    'isInfrastructureFailure',
    'isTransportFailure',
    'proxySettings',
    'readCappedBody',
    'unreachable',
  ]);
});
