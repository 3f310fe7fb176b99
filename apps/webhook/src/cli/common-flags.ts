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
  name: 'registry-private-host',
  type: 'string',
  multiple: true,
  value: 'HOST[:PORT]',
  description:
    "a token realm or redirect target that may be on a private address (a registry's own host always may)",
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
