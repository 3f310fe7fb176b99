// Flags several commands share, described once so they read and behave the same everywhere.
import type { FlagSpec } from './flags.js';

export function policyFileFlag(description: string): FlagSpec {
  return {
    name: 'policy-file',
    type: 'string',
    multiple: true,
    aliases: ['policy'],
    value: 'FILE',
    description,
  };
}

export const INSECURE_REGISTRY_FLAG: FlagSpec = {
  name: 'insecure-registry',
  type: 'string',
  multiple: true,
  value: 'HOST[:PORT]',
  description: 'a registry spoken to over plain HTTP',
};

export const PRIVATE_HOST_FLAG: FlagSpec = {
  name: 'private-host',
  aliases: ['registry-private-host'],
  type: 'string',
  multiple: true,
  value: 'HOST[:PORT]',
  description:
    "a host that may be on a loopback, private or link-local address when a registry's token realm or redirect, a TrustRoot's TUF mirror or a policy's remote URL names it (a registry's own host, --tuf-mirror and listed KMS endpoints always may)",
};

export const KMS_ENDPOINT_FLAG: FlagSpec = {
  name: 'kms-endpoint',
  type: 'string',
  multiple: true,
  value: 'HOST[:PORT]',
  description:
    'an endpoint awskms:// and azurekms:// keys may name besides AWS KMS and Key Vault hosts (LocalStack, an emulator, a private endpoint); it receives the cloud credentials',
};

export const REGISTRY_CA_FLAG: FlagSpec = {
  name: 'registry-ca-file',
  type: 'string',
  multiple: true,
  value: 'FILE',
  description: 'PEM CA certificates trusted for registry and token-realm TLS, beside the system ones',
};

export const CLOUD_CREDENTIALS_FLAG: FlagSpec = {
  name: 'cloud-credentials',
  type: 'string',
  multiple: true,
  value: 'NAME',
  description: "registry credentials from the workload's cloud identity, after pull secrets: ecr, gcp or acr",
};

export const DOCKER_CONFIG_FLAG: FlagSpec = {
  name: 'docker-config',
  type: 'string',
  value: 'FILE',
  default: '$DOCKER_CONFIG/config.json or ~/.docker/config.json',
  description: 'registry credentials',
};
