// Where a KMS URI may send Signet. Whoever writes a ClusterImagePolicy writes its `key.kms`, and
// a request to a KMS carries the workload's cloud credentials (a signed AWS request has the access
// key id and session token; Key Vault is asked with a token). So the host a URI names must be the
// cloud's own KMS service, or one the operator listed (`--kms-endpoint`, e.g. LocalStack, a
// private endpoint under its own name): decided on the name alone, before any lookup or request.
// Google Cloud KMS and Vault take their address from the operator only (the fetcher's options,
// VAULT_ADDR), never from the URI.
//
// The cloud names are trusted with their own DNS: interface VPC endpoints and private links
// resolve to private addresses by design, and TLS proves the name before a credential is sent.
import type { KmsKeyRef } from './uri.js';

/** A KMS URI names a host the fetcher will not call: refused before any I/O. */
export class KmsEndpointError extends Error {
  override readonly name = 'KmsEndpointError';
  readonly code = 'SIGNET_KMS_ENDPOINT_REFUSED';
  /** `host[:port]` as the URI names it. */
  readonly endpoint: string;

  constructor(endpoint: string, what: string) {
    super(`KMS endpoint ${endpoint} is not ${what}; list it with --kms-endpoint to allow it`);
    this.endpoint = endpoint;
  }
}

/**
 * The DNS suffixes of AWS's partitions (standard, dual-stack): aws, aws-cn, aws-eusc, aws-iso,
 * aws-iso-b, aws-iso-e, aws-iso-f, aws-us-gov, as the AWS SDK's partition table lists them.
 */
const AWS_SUFFIXES = [
  'amazonaws.com',
  'api.aws',
  'amazonaws.com.cn',
  'api.amazonwebservices.com.cn',
  'amazonaws.eu',
  'api.amazonwebservices.eu',
  'c2s.ic.gov',
  'api.aws.ic.gov',
  'sc2s.sgov.gov',
  'api.aws.scloud',
  'cloud.adc-e.uk',
  'api.cloud-aws.adc-e.uk',
  'csp.hci.ic.gov',
  'api.aws.hci.ic.gov',
];
const suffixes = (list: readonly string[]) => list.map((s) => s.replaceAll('.', '\\.')).join('|');
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
/**
 * `kms[-fips].REGION.SUFFIX` (the SDK's endpoint rules for KMS), and interface VPC endpoints:
 * `vpce-ID[-AZ].kms[-fips].REGION.vpce.SUFFIX`. A port, if any, is 443.
 */
const AWS_KMS = new RegExp(
  `^(?:vpce-${LABEL}\\.kms(?:-fips)?\\.${LABEL}\\.vpce\\.(?:${suffixes(AWS_SUFFIXES)})|kms(?:-fips)?\\.${LABEL}\\.(?:${suffixes(AWS_SUFFIXES)}))(?::443)?$`,
);

/** Key Vault and Managed HSM in the public cloud, Azure Government, Azure China and Azure Germany. */
const AZURE_SUFFIXES = [
  'vault.azure.net',
  'managedhsm.azure.net',
  'vault.usgovcloudapi.net',
  'managedhsm.usgovcloudapi.net',
  'vault.azure.cn',
  'managedhsm.azure.cn',
  'vault.microsoftazure.de',
];
const AZURE_VAULT = new RegExp(`^${LABEL}\\.(?:${suffixes(AZURE_SUFFIXES)})(?::443)?$`);

/** Whether `endpoint` (`host[:port]`) is an AWS KMS endpoint by its name. */
export function isAwsKmsEndpoint(endpoint: string): boolean {
  return AWS_KMS.test(endpoint.toLowerCase());
}

/** Whether `host` (`host[:port]`) is an Azure Key Vault or Managed HSM host by its name. */
export function isAzureVaultHost(host: string): boolean {
  return AZURE_VAULT.test(host.toLowerCase());
}

/** Endpoints the operator allows besides the clouds' own: `host` stands for `host:443` too. */
export class KmsEndpoints {
  readonly #listed: ReadonlySet<string>;

  constructor(listed: Iterable<string> = []) {
    this.#listed = new Set([...listed].map((host) => host.toLowerCase().replace(/:443$/, '')));
  }

  /** Throws {@link KmsEndpointError} when `ref` names a host that is neither the cloud's nor listed. */
  check(ref: KmsKeyRef): void {
    if (ref.provider === 'aws' && ref.endpoint !== undefined) {
      if (!isAwsKmsEndpoint(ref.endpoint) && !this.#isListed(ref.endpoint)) {
        throw new KmsEndpointError(ref.endpoint, 'an AWS KMS endpoint');
      }
    }
    if (ref.provider === 'azure') {
      const host = ref.vaultUrl.replace(/^https:\/\//, '').replace(/\/$/, '');
      if (!isAzureVaultHost(host) && !this.#isListed(host)) {
        throw new KmsEndpointError(host, 'an Azure Key Vault or Managed HSM host');
      }
    }
  }

  #isListed(endpoint: string): boolean {
    return this.#listed.has(endpoint.toLowerCase().replace(/:443$/, ''));
  }
}
