// Which credential to use for an image, matched the way the kubelet matches pull-secret keys:
// a key is a host (with port when the registry has one, `*` allowed per label) and an optional
// repository path prefix; `https://`, a `/v1/` or `/v2/` API suffix and Docker Hub's many names are
// normalised away; the most specific matching key wins.

import {
  type CredentialEntry,
  credentialsFromDockerConfig,
  credentialsFromSecret,
  type RegistryCredential,
} from './pull-secrets.js';
import type { RepositoryRef } from './references.js';

/** What the registry client asks for credentials; a `Keychain` or anything else that can answer. */
export interface CredentialSource {
  credentialFor(repository: RepositoryRef): RegistryCredential | undefined;
}

/** The registry part of normalised references for Docker Hub. */
export const DOCKER_HUB_REGISTRY = 'index.docker.io';
const DOCKER_HUB_ALIASES: ReadonlySet<string> = new Set([
  'docker.io',
  'index.docker.io',
  'registry-1.docker.io',
  'registry.hub.docker.com',
]);

interface CompiledKey {
  /** The whole host; `*` matches within one label, so label counts must agree. */
  readonly host: RegExp;
  readonly port: string;
  /** Repository path segments the image's repository must start with. */
  readonly path: readonly string[];
  readonly wildcards: number;
  readonly entry: CredentialEntry;
}

export class Keychain implements CredentialSource {
  readonly #keys: readonly CompiledKey[];

  constructor(entries: readonly CredentialEntry[]) {
    // Most specific first: longer path prefix, then fewer wildcards; ties keep input order.
    this.#keys = entries
      .map(compileKey)
      .sort((a, b) => b.path.length - a.path.length || a.wildcards - b.wildcards);
  }

  /** All entries of these pull secrets (in `imagePullSecrets` order: on a tie the first wins). */
  static fromSecrets(secrets: readonly unknown[]): Keychain {
    return new Keychain(secrets.flatMap((secret) => credentialsFromSecret(secret)));
  }

  /** The `auths` of a Docker `config.json` (text or parsed). */
  static fromDockerConfig(config: unknown, origin?: string): Keychain {
    return new Keychain(credentialsFromDockerConfig(config, origin));
  }

  /** The credential for `repository`, or `undefined` (anonymous). */
  credentialFor(repository: RepositoryRef): RegistryCredential | undefined {
    return this.entryFor(repository)?.credential;
  }

  /** The matching entry itself, to say which key and Secret were used. */
  entryFor(repository: RepositoryRef): CredentialEntry | undefined {
    const { host, port } = splitHost(normaliseHost(repository.registry));
    const path = repository.repository.split('/');
    const match = this.#keys.find(
      (key) =>
        key.port === port &&
        key.host.test(host) &&
        key.path.every((segment, index) => path[index] === segment),
    );
    return match?.entry;
  }
}

function compileKey(entry: CredentialEntry): CompiledKey {
  const withoutScheme = entry.key.trim().replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const slash = withoutScheme.indexOf('/');
  const hostPart = slash === -1 ? withoutScheme : withoutScheme.slice(0, slash);
  const pathPart = slash === -1 ? '' : withoutScheme.slice(slash);
  const { host, port } = splitHost(normaliseHost(hostPart));
  const path = pathPart
    .replace(/^\/v[12](?=\/|$)/, '')
    .split('/')
    .filter((segment) => segment !== '');
  return { host: hostPattern(host), port, path, wildcards: host.split('*').length - 1, entry };
}

function normaliseHost(host: string): string {
  const lower = host.toLowerCase();
  return DOCKER_HUB_ALIASES.has(lower) ? DOCKER_HUB_REGISTRY : lower;
}

/** `host:port` -> parts; `[::1]:5000` keeps its brackets. */
function splitHost(hostAndPort: string): { host: string; port: string } {
  const colon = hostAndPort.lastIndexOf(':');
  const port = hostAndPort.slice(colon + 1);
  return colon > hostAndPort.lastIndexOf(']') && /^\d+$/.test(port)
    ? { host: hostAndPort.slice(0, colon), port }
    : { host: hostAndPort, port: '' };
}

/** A host pattern: `*` stands for any run of characters within one label. */
function hostPattern(host: string): RegExp {
  const escaped = host.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '[^.]*');
  return new RegExp(`^${escaped}$`);
}
