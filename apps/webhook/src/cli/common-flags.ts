// Flags several commands share, described once so they read and behave the same everywhere.
import { SIGNATURE_FORMATS } from '@signet/verifier';
import { UsageError } from '../errors.js';
import { parseGoDuration } from '../http/duration.js';
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

export const EXCEPTION_MAX_LIFETIME_FLAG: FlagSpec = {
  name: 'exception-max-lifetime',
  type: 'string',
  value: 'DURATION',
  default: '720h',
  description: 'longest an ImagePolicyException may live (1h to 8760h); a longer one applies to nothing',
};

const HOUR_MS = 3_600_000;

/** `--exception-max-lifetime` in milliseconds (default 30 days), or a UsageError naming the flag. */
export function exceptionMaxLifetimeMs(value: string | undefined): number {
  const ms = parseGoDuration(value ?? '720h');
  if (ms === undefined || ms < HOUR_MS || ms > 8760 * HOUR_MS) {
    throw new UsageError(
      `--exception-max-lifetime must be a duration from 1h to 8760h (365 days), got ${JSON.stringify(value)}`,
    );
  }
  return ms;
}

export const SIGNATURE_FORMAT_DEFAULT_FLAG: FlagSpec = {
  name: 'signature-format-default',
  type: 'string',
  value: 'FORMATS',
  default: 'legacy,bundle',
  description:
    "what an authority without signatureFormat reads, in order: legacy,bundle (either counts), or legacy alone (policy-controller's behaviour)",
};

/**
 * `--signature-format-default` as format names in reading order (default: the legacy tags, then
 * the bundle referrers), or a UsageError naming the flag.
 */
export function signatureFormatDefault(value: string | undefined): string[] {
  const registered = SIGNATURE_FORMATS.all.map((format) => format.name);
  const names = (value ?? SIGNATURE_FORMATS.defaults.join(',')).split(',').map((name) => name.trim());
  const unknown = names.find((name) => !registered.includes(name));
  if (unknown !== undefined || new Set(names).size !== names.length) {
    throw new UsageError(
      `--signature-format-default must be signature formats separated by commas, each once (${registered.join(', ')}), got ${JSON.stringify(value)}`,
    );
  }
  return names;
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

/** `-f`: manifests, as kubectl takes them. */
export function filenameFlag(description: string): FlagSpec {
  return {
    name: 'filename',
    short: 'f',
    aliases: ['resource'],
    type: 'string',
    multiple: true,
    value: 'PATH',
    description: `${description}: a manifest file (YAML or JSON), a directory of them, or \`-\` (stdin)`,
  };
}

/** `-n`: the namespace a command works on, as kubectl users read it (never Signet's own). */
export function namespaceFlag(
  description: string,
  options: { readonly default: string; readonly multiple?: boolean },
): FlagSpec {
  return {
    name: 'namespace',
    short: 'n',
    type: 'string',
    ...(options.multiple ? { multiple: true } : {}),
    value: 'NS',
    default: options.default,
    description,
  };
}

/** Signet's own namespace; `serve` and `migrate` called it `--namespace` before `-n` meant the target. */
export function signetNamespaceFlag(
  description: string,
  options: { readonly default: string; readonly deprecatedNamespace?: boolean },
): FlagSpec {
  return {
    name: 'signet-namespace',
    type: 'string',
    ...(options.deprecatedNamespace ? { deprecatedAliases: ['namespace'] } : {}),
    value: 'NS',
    default: options.default,
    description,
  };
}

export function kubeconfigFlag(description: string, fallback: string): FlagSpec {
  return { name: 'kubeconfig', type: 'string', value: 'PATH', default: fallback, description };
}

export const CONTEXT_FLAG: FlagSpec = {
  name: 'context',
  type: 'string',
  value: 'NAME',
  default: "the kubeconfig's current-context",
  description: 'the kubeconfig context to use',
};

/** `-o`: the output formats a command offers; the first is the default. */
export function outputFlag(formats: readonly [string, ...string[]]): FlagSpec {
  return {
    name: 'output',
    short: 'o',
    type: 'string',
    value: 'FORMAT',
    default: formats[0],
    choices: formats,
    description: wordList(formats, 'or'),
  };
}

/** The `--output` given (or the default), refused unless `formats` has it. */
export function outputFormat<F extends string>(value: unknown, formats: readonly [F, ...F[]]): F {
  const output = value === undefined ? formats[0] : String(value);
  if (!(formats as readonly string[]).includes(output))
    throw new UsageError(`--output must be ${wordList(formats, 'or')}, got ${JSON.stringify(output)}`);
  return output as F;
}

function wordList(words: readonly string[], last: string): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} ${last} ${words.at(-1)}`;
}
