// How Signet reaches registries and the other hosts it calls, from the flags `serve`, `verify` and
// `audit` share: plain-HTTP hosts, hosts allowed on private addresses (registries' token realms
// and redirects, TrustRoots' TUF mirrors, remote policies), extra CA certificates (read once, at
// start), the cloud credential providers to enable and the KMS endpoints the operator allows.
// Proxies come from the environment (HTTPS_PROXY, HTTP_PROXY, NO_PROXY), as for every Pod.
import { readFileSync } from 'node:fs';
import { CLOUD_PROVIDER_NAMES, type CloudProviderName, isCloudProviderName } from '@signet/registry';
import type { RegistrySettings } from './config.js';
import { UsageError } from './errors.js';

const HOST = /^[A-Za-z0-9.-]+(:\d+)?$|^\[[0-9a-fA-F:]+\](:\d+)?$/;

/** Validates the registry flags; every problem is a UsageError naming the flag. */
export function registrySettingsFrom(values: {
  readonly 'insecure-registry'?: string[] | undefined;
  readonly 'private-host'?: string[] | undefined;
  readonly 'registry-ca-file'?: string[] | undefined;
  readonly 'cloud-credentials'?: string[] | undefined;
  readonly 'kms-endpoint'?: string[] | undefined;
}): RegistrySettings {
  for (const flag of ['insecure-registry', 'private-host', 'kms-endpoint'] as const) {
    for (const host of values[flag] ?? []) {
      if (!HOST.test(host)) throw new UsageError(`--${flag} takes host[:port], got ${JSON.stringify(host)}`);
    }
  }
  const cloud = (values['cloud-credentials'] ?? [])
    .flatMap((value) => value.split(','))
    .map((name) => name.trim());
  for (const name of cloud) {
    if (!isCloudProviderName(name)) {
      throw new UsageError(
        `--cloud-credentials takes ${CLOUD_PROVIDER_NAMES.join(', ')}, got ${JSON.stringify(name)}`,
      );
    }
  }
  return {
    insecureRegistries: values['insecure-registry'] ?? [],
    privateHosts: values['private-host'] ?? [],
    caCertificates: (values['registry-ca-file'] ?? []).map(readCaFile),
    cloudCredentials: cloud as CloudProviderName[],
    kmsEndpoints: values['kms-endpoint'] ?? [],
  };
}

function readCaFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new UsageError(
      `--registry-ca-file ${path}: cannot be read (${typeof code === 'string' ? code : 'error'})`,
    );
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) {
    throw new UsageError(
      `--registry-ca-file ${path}: no PEM certificate (-----BEGIN CERTIFICATE-----) in it`,
    );
  }
  return text;
}
