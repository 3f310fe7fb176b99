/**
 * @signet/kms: fetches the public keys of cosign KMS URIs (`awskms://`, `gcpkms://`,
 * `azurekms://`, `hashivault://`) for @signet/verifier's `KmsKeyStore`, with each cloud's SDK and
 * its default credential chain. A provider's SDK is loaded the first time one of its keys is
 * fetched, so a deployment that names only Vault keys never loads the AWS, Azure or Google SDKs.
 */
export type { AwsOptions } from './aws.js';
export type { AzureOptions, AzureTokenCredential } from './azure.js';
export { isAwsKmsEndpoint, isAzureVaultHost, KmsEndpointError, KmsEndpoints } from './endpoints.js';
export { createKmsKeyFetcher, type KmsFetcherOptions } from './fetcher.js';
export type { GcpOptions } from './gcp.js';
export { type KmsKeyRef, KmsUriError, parseKmsUri } from './uri.js';
