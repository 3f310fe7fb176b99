// Registry credentials out of the places Kubernetes and Docker keep them: `kubernetes.io/dockerconfigjson`
// and legacy `kubernetes.io/dockercfg` Secrets (as parsed from the API, `data` base64-encoded) and a
// Docker `config.json`. Parsing only: matching an image to an entry is the keychain's job. Errors
// name the Secret and the registry key, never a credential.

/** A credential for one registry key. */
export type RegistryCredential =
  | { readonly kind: 'basic'; readonly username: string; readonly password: string }
  /** An OAuth2 refresh token (`identitytoken`), exchanged at the token endpoint for a bearer token. */
  | { readonly kind: 'identity-token'; readonly username: string | undefined; readonly token: string };

/** One `auths` entry: the registry key as written and what it holds. */
export interface CredentialEntry {
  /** As written: `https://index.docker.io/v1/`, `registry.example:5000`, `registry.example/team`. */
  readonly key: string;
  readonly credential: RegistryCredential;
  /** Where it came from, for messages: `Secret default/regcred`. */
  readonly origin: string;
}

export const DOCKER_CONFIG_JSON_TYPE = 'kubernetes.io/dockerconfigjson';
export const DOCKER_CFG_TYPE = 'kubernetes.io/dockercfg';

/** A pull secret or Docker configuration that cannot be read. */
export class PullSecretError extends Error {
  override readonly name = 'PullSecretError';
  readonly code = 'INVALID_PULL_SECRET';
  /** `Secret namespace/name` or the label given for a config file. */
  readonly origin: string;
  readonly problem: string;

  constructor(origin: string, problem: string, options?: ErrorOptions) {
    super(`${origin}: ${problem}`, options);
    this.origin = origin;
    this.problem = problem;
  }
}

type JsonObject = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The entries of a `kubernetes.io/dockerconfigjson` or `kubernetes.io/dockercfg` Secret object.
 * Throws {@link PullSecretError} for any other type or unreadable content.
 */
export function credentialsFromSecret(secret: unknown): CredentialEntry[] {
  const origin = secretName(secret);
  if (!isObject(secret)) throw new PullSecretError(origin, 'is not an object');
  const { type, data } = secret;
  const [dataKey, wrapped] =
    type === DOCKER_CONFIG_JSON_TYPE
      ? ['.dockerconfigjson', true]
      : type === DOCKER_CFG_TYPE
        ? ['.dockercfg', false]
        : [undefined, false];
  if (dataKey === undefined) {
    throw new PullSecretError(
      origin,
      `has type ${JSON.stringify(type ?? null)}; a pull secret has type ${DOCKER_CONFIG_JSON_TYPE} or ${DOCKER_CFG_TYPE}`,
    );
  }
  const encoded = isObject(data) ? data[dataKey] : undefined;
  if (typeof encoded !== 'string') throw new PullSecretError(origin, `has no data["${dataKey}"]`);
  if (!isBase64(encoded)) throw new PullSecretError(origin, `data["${dataKey}"] is not base64`);
  const json = parseJson(Buffer.from(encoded, 'base64').toString('utf8'), origin, `data["${dataKey}"]`);
  return wrapped
    ? entriesOfConfig(json, origin, `data["${dataKey}"]`)
    : entriesOfAuths(json, origin, dataKey);
}

/** The `auths` entries of a Docker `config.json` (text or parsed); `origin` labels errors. */
export function credentialsFromDockerConfig(config: unknown, origin = 'docker config'): CredentialEntry[] {
  const json = typeof config === 'string' ? parseJson(config, origin, 'the file') : config;
  return entriesOfConfig(json, origin, 'the file');
}

function entriesOfConfig(json: unknown, origin: string, where: string): CredentialEntry[] {
  if (!isObject(json)) throw new PullSecretError(origin, `${where} is not a JSON object`);
  if (json.auths === undefined) return [];
  return entriesOfAuths(json.auths, origin, 'auths');
}

function entriesOfAuths(auths: unknown, origin: string, where: string): CredentialEntry[] {
  if (!isObject(auths)) throw new PullSecretError(origin, `${where} is not a JSON object`);
  const entries: CredentialEntry[] = [];
  for (const [key, entry] of Object.entries(auths)) {
    const credential = credentialOf(entry, origin, `${where}[${JSON.stringify(key)}]`);
    if (credential) entries.push({ key, credential, origin });
  }
  return entries;
}

/**
 * `identitytoken` wins (docker sends it instead of the password), then `auth` (base64
 * `user:password`), then `username`/`password`. An entry with none of them (what `docker login`
 * writes when a credential helper holds the secret) gives nothing.
 */
function credentialOf(entry: unknown, origin: string, where: string): RegistryCredential | undefined {
  if (!isObject(entry)) throw new PullSecretError(origin, `${where} is not a JSON object`);
  const field = (name: string): string => {
    const value = entry[name] ?? '';
    if (typeof value !== 'string') throw new PullSecretError(origin, `${where}.${name} is not a string`);
    return value;
  };
  const auth = field('auth');
  const identityToken = field('identitytoken');
  let username = field('username');
  let password = field('password');
  if (auth !== '') {
    const decoded = isBase64(auth) ? Buffer.from(auth, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    if (colon === -1) {
      throw new PullSecretError(origin, `${where}.auth is not the base64 encoding of "username:password"`);
    }
    username = decoded.slice(0, colon);
    password = decoded.slice(colon + 1);
  }
  if (identityToken !== '') {
    return { kind: 'identity-token', username: username === '' ? undefined : username, token: identityToken };
  }
  if (username === '' && password === '') return undefined;
  return { kind: 'basic', username, password };
}

function parseJson(text: string, origin: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // The parser's message quotes the text, which holds credentials: neither it nor the error goes on.
    throw new PullSecretError(origin, `${where} is not valid JSON`);
  }
}

/** Standard base64 with padding, as Go's `base64.StdEncoding` (kubelet) accepts it. */
function isBase64(text: string): boolean {
  return text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text);
}

function secretName(secret: unknown): string {
  const metadata = isObject(secret) && isObject(secret.metadata) ? secret.metadata : {};
  const name = typeof metadata.name === 'string' ? metadata.name : '<unnamed>';
  return typeof metadata.namespace === 'string' ? `Secret ${metadata.namespace}/${name}` : `Secret ${name}`;
}
