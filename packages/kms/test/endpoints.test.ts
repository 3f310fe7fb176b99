// Which hosts a KMS URI may name on its own (the clouds' KMS services, by the names their SDKs
// and documentation give), and that anything else needs the operator's `--kms-endpoint`.
import { describe, expect, it } from 'vitest';
import { isAwsKmsEndpoint, isAzureVaultHost, KmsEndpoints } from '../src/endpoints.js';
import { parseKmsUri } from '../src/uri.js';

describe('AWS KMS endpoints', () => {
  it.each([
    'kms.us-east-1.amazonaws.com',
    'kms.us-east-1.amazonaws.com:443',
    'KMS.EU-WEST-3.AMAZONAWS.COM',
    'kms-fips.us-west-2.amazonaws.com',
    'kms.us-east-2.api.aws',
    'kms-fips.ca-central-1.api.aws',
    'kms.us-gov-west-1.amazonaws.com',
    'kms-fips.us-gov-east-1.amazonaws.com',
    'kms.cn-north-1.amazonaws.com.cn',
    'kms.cn-northwest-1.api.amazonwebservices.com.cn',
    'kms.eusc-de-east-1.amazonaws.eu',
    'kms.us-iso-east-1.c2s.ic.gov',
    'kms.us-isob-east-1.sc2s.sgov.gov',
    'kms.eu-isoe-west-1.cloud.adc-e.uk',
    'kms.us-isof-south-1.csp.hci.ic.gov',
    'vpce-0295a3caf8414c94a-z87xwuit.kms.us-east-1.vpce.amazonaws.com',
    'vpce-0295a3caf8414c94a-z87xwuit-us-east-1a.kms.us-east-1.vpce.amazonaws.com',
    'vpce-0295a3caf8414c94a-z87xwuit.kms-fips.us-east-1.vpce.amazonaws.com',
    'vpce-0abc-def.kms.cn-north-1.vpce.amazonaws.com.cn',
  ])('%s is one', (endpoint) => {
    expect(isAwsKmsEndpoint(endpoint)).toBe(true);
  });

  it.each([
    'kms.us-east-1.amazonaws.com:4566',
    'kms.us-east-1.amazonaws.com.attacker.example',
    'kms.us-east-1.amazonaws.com@127.0.0.1',
    'attacker.example',
    'kms.amazonaws.com',
    'ecr.us-east-1.amazonaws.com',
    'sts.amazonaws.com',
    'kms.us-east-1.amazonaws.com.',
    'x.kms.us-east-1.amazonaws.com',
    'vpce-abc.kms.us-east-1.amazonaws.com',
    'kms.us_east_1.amazonaws.com',
    '127.0.0.1',
    '169.254.169.254',
    '[::1]:443',
    'localhost:4566',
    '',
  ])('%s is not', (endpoint) => {
    expect(isAwsKmsEndpoint(endpoint)).toBe(false);
  });
});

describe('Azure Key Vault hosts', () => {
  it.each([
    'release.vault.azure.net',
    'release.vault.azure.net:443',
    'hsm-1.managedhsm.azure.net',
    'release.vault.usgovcloudapi.net',
    'release.managedhsm.usgovcloudapi.net',
    'release.vault.azure.cn',
    'release.managedhsm.azure.cn',
    'release.vault.microsoftazure.de',
  ])('%s is one', (host) => {
    expect(isAzureVaultHost(host)).toBe(true);
  });

  it.each([
    'vault.azure.net',
    'release.vault.azure.net:8443',
    'release.vault.azure.net.attacker.example',
    'a.b.vault.azure.net',
    '127.0.0.1:8443',
    'localhost',
    'release.blob.core.windows.net',
  ])('%s is not', (host) => {
    expect(isAzureVaultHost(host)).toBe(false);
  });
});

describe('KmsEndpoints', () => {
  const check = (endpoints: KmsEndpoints, uri: string) => () => endpoints.check(parseKmsUri(uri));

  it('lets the clouds through, and what the operator listed (a host alone standing for port 443)', () => {
    const endpoints = new KmsEndpoints(['LocalStack:4566', 'kms.corp.example', 'vault.corp.example:8443']);
    expect(check(endpoints, 'awskms:///alias/release')).not.toThrow();
    expect(check(endpoints, 'awskms://kms.eu-west-1.amazonaws.com/alias/release')).not.toThrow();
    expect(check(endpoints, 'awskms://localstack:4566/alias/release')).not.toThrow();
    expect(check(endpoints, 'awskms://kms.corp.example:443/alias/release')).not.toThrow();
    expect(check(endpoints, 'azurekms://release.vault.azure.net/key')).not.toThrow();
    expect(check(endpoints, 'azurekms://vault.corp.example:8443/key')).not.toThrow();
    expect(check(endpoints, 'gcpkms://projects/p/locations/l/keyRings/r/cryptoKeys/k')).not.toThrow();
    expect(check(endpoints, 'hashivault://release')).not.toThrow();
  });

  it('refuses the rest with a coded error that says what to do', () => {
    const endpoints = new KmsEndpoints(['localstack:4566']);
    expect(check(endpoints, 'awskms://localstack:4567/alias/release')).toThrow(
      expect.objectContaining({
        code: 'SIGNET_KMS_ENDPOINT_REFUSED',
        endpoint: 'localstack:4567',
        message:
          'KMS endpoint localstack:4567 is not an AWS KMS endpoint; list it with --kms-endpoint to allow it',
      }),
    );
    expect(check(endpoints, 'azurekms://localstack:4566.attacker.example/key')).toThrow(
      'KMS endpoint localstack:4566.attacker.example is not an Azure Key Vault or Managed HSM host; list it with --kms-endpoint to allow it',
    );
  });
});
