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
