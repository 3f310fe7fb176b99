import { describe, expect, it } from 'vitest';
import { KmsUriError, parseKmsUri } from '../src/index.js';

describe("cosign's KMS URIs", () => {
  it.each([
    [
      'awskms:///arn:aws:kms:us-east-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
      {
        provider: 'aws',
        endpoint: undefined,
        keyId: 'arn:aws:kms:us-east-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
        region: 'us-east-2',
      },
    ],
    [
      'awskms://localhost:4566/alias/release',
      { provider: 'aws', endpoint: 'localhost:4566', keyId: 'alias/release', region: undefined },
    ],
    [
      'awskms:///1234abcd-12ab-34cd-56ef-1234567890ab',
      {
        provider: 'aws',
        endpoint: undefined,
        keyId: '1234abcd-12ab-34cd-56ef-1234567890ab',
        region: undefined,
      },
    ],
    [
      'gcpkms://projects/p/locations/l/keyRings/r/cryptoKeys/k/versions/3',
      { provider: 'gcp', cryptoKey: 'projects/p/locations/l/keyRings/r/cryptoKeys/k', version: '3' },
    ],
    [
      'azurekms://acme.vault.azure.net/release',
      {
        provider: 'azure',
        vaultUrl: 'https://acme.vault.azure.net/',
        keyName: 'release',
        version: undefined,
      },
    ],
    [
      'azurekms://acme.vault.azure.net/release/0123abcd',
      {
        provider: 'azure',
        vaultUrl: 'https://acme.vault.azure.net/',
        keyName: 'release',
        version: '0123abcd',
      },
    ],
    ['hashivault://release-key', { provider: 'hashivault', keyName: 'release-key' }],
  ])('%s', (uri, expected) => {
    expect(parseKmsUri(uri)).toEqual(expected);
  });

  it.each([
    'awskms:///not-a-key',
    'gcpkms://projects/p',
    'azurekms://vault',
    'hashivault://a/b',
    'vault://x',
  ])('refuses %s, saying which form is expected', (uri) => {
    expect(() => parseKmsUri(uri)).toThrow(KmsUriError);
    expect(() => parseKmsUri(uri)).toThrow(/is not of the form|names no supported provider/);
  });
});
