// Registry authentication: anonymous first, then whatever the registry's 401 challenge asks for
// (Basic, or a Bearer token from its token server), with tokens cached per registry, scope and
// credential. A registry that keeps answering 401 to a freshly issued token gets exactly one retry
// and then an `AUTH_LOOP` error, never another round. Nothing that failed is remembered: a
// challenge is kept only once it led to access, and dropped as soon as answering it fails, so one
// repository's broken token realm never denies the registry's other repositories.
import { createHash } from 'node:crypto';
import { ExpiringCache } from './cache.js';
import { pickChallenge, type RegistryChallenge } from './challenge.js';
import type { Clock } from './clock.js';
import type { CredentialProvider } from './cloud/provider.js';
import type { RegistryCall } from './deadline.js';
import { RegistryError } from './errors.js';
import type { HttpRequest, HttpResponse, HttpTransport } from './http.js';
import type { CredentialSource } from './keychain.js';
import type { RegistryCredential } from './pull-secrets.js';
import type { RepositoryRef } from './references.js';
import { basicAuthorization, requestToken } from './token.js';

/** How long a registry's challenge is remembered, so later requests authenticate up front. */
const CHALLENGE_TTL_MS = 60 * 60_000;
/** Tokens are dropped this long before they expire, so one is never sent as it runs out. */
const TOKEN_EXPIRY_MARGIN_MS = 10_000;

export interface AuthCacheOptions {
  /** Tokens kept at most (least recently used go first). */
  readonly maxTokens?: number;
  /** Registries whose challenge is remembered. */
  readonly maxRegistries?: number;
  /** Upper bound on how long a token is reused, whatever its `expires_in`. */
  readonly maxTokenTtlMs?: number;
}

/**
 * Tokens and challenges, shared by every client of one process. Token keys include a hash of the
 * credential, so a token obtained with one namespace's pull secret is never used for another's.
 */
export class AuthCache {
  readonly tokens: ExpiringCache<string>;
  readonly challenges: ExpiringCache<RegistryChallenge>;
  readonly clock: Clock;
  readonly maxTokenTtlMs: number;

  constructor(clock: Clock, options: AuthCacheOptions = {}) {
    this.clock = clock;
    this.tokens = new ExpiringCache({ maxEntries: options.maxTokens ?? 1024, clock });
    this.challenges = new ExpiringCache({ maxEntries: options.maxRegistries ?? 256, clock });
    this.maxTokenTtlMs = options.maxTokenTtlMs ?? 60 * 60_000;
  }
}

/** The scope a read needs: `repository:<name>:pull`. */
export function pullScope(repository: RepositoryRef): string {
  return `repository:${repository.repository}:pull`;
}

export class Authenticator {
  readonly #transport: HttpTransport;
  readonly #cache: AuthCache;
  readonly #credentials: CredentialSource | undefined;
  readonly #providers: readonly CredentialProvider[];

  /** `providers` (cloud credentials) are asked, in order, when no pull secret matches. */
  constructor(
    transport: HttpTransport,
    cache: AuthCache,
    credentials: CredentialSource | undefined,
    providers: readonly CredentialProvider[] = [],
  ) {
    this.#transport = transport;
    this.#cache = cache;
    this.#credentials = credentials;
    this.#providers = providers;
  }

  /** The pull secret for `repository`, else the first cloud provider's that serves its registry. */
  async #credentialFor(
    repository: RepositoryRef,
    call: RegistryCall,
  ): Promise<RegistryCredential | undefined> {
    const fromSecret = this.#credentials?.credentialFor(repository);
    if (fromSecret !== undefined) return fromSecret;
    const provider = this.#providers.find((candidate) => candidate.handles(repository.registry));
    return provider?.credentialFor(repository, { transport: this.#transport, call });
  }

  /**
   * Sends `request` to `repository`'s registry, authenticating as its challenge asks. Returns any
   * response but 401; throws `UNAUTHORIZED` or `AUTH_LOOP` when authentication does not succeed.
   */
  async send(request: HttpRequest, repository: RepositoryRef, call: RegistryCall): Promise<HttpResponse> {
    const credential = await this.#credentialFor(repository, call);
    const session = new AuthSession(this.#transport, this.#cache, repository, credential);
    const first = await session.knownAuthorization(call);
    let response = await this.#transport.send(withAuthorization(request, first), call);
    if (response.status !== 401) return response;
    const challenge = pickChallenge(response.headers.get('www-authenticate'));
    if (challenge === undefined) {
      throw new RegistryError(
        'UNAUTHORIZED',
        { ...repository, status: 401 },
        'answered 401 without a Basic or Bearer challenge',
      );
    }
    const second = await session.answer(challenge, call);
    if (second === undefined) {
      throw new RegistryError(
        'UNAUTHORIZED',
        { ...repository, status: 401 },
        'requires Basic credentials and no pull secret matches this registry',
      );
    }
    if (second === first) {
      throw new RegistryError(
        'UNAUTHORIZED',
        { ...repository, status: 401 },
        'refused the configured credentials',
      );
    }
    response = await this.#transport.send(withAuthorization(request, second), call);
    if (response.status !== 401) {
      // Only a challenge that led to access is remembered for the next requests to this registry.
      session.remember(challenge);
      return response;
    }
    session.forgetToken();
    throw refusal(
      challenge,
      pickChallenge(response.headers.get('www-authenticate')),
      repository,
      session.scope,
    );
  }
}

/** One request's view of the cache: its registry, scope and credential. */
class AuthSession {
  readonly scope: string;
  readonly #transport: HttpTransport;
  readonly #cache: AuthCache;
  readonly #repository: RepositoryRef;
  readonly #credential: RegistryCredential | undefined;
  readonly #tokenKey: string;
  /** The remembered challenge that failed up front in this request, and how. */
  #failedHint: { readonly challenge: BearerChallenge; readonly error: unknown } | undefined;

  constructor(
    transport: HttpTransport,
    cache: AuthCache,
    repository: RepositoryRef,
    credential: RegistryCredential | undefined,
  ) {
    this.#transport = transport;
    this.#cache = cache;
    this.#repository = repository;
    this.#credential = credential;
    this.scope = pullScope(repository);
    this.#tokenKey = `${repository.registry.toLowerCase()} ${this.scope} ${fingerprint(this.#credential)}`;
  }

  /**
   * The Authorization to send before any challenge: a cached token, or what the registry's last
   * successful challenge asks for. That challenge is only a hint: when answering it fails (its
   * realm is down or refuses), it is forgotten and the request goes out without authorization, so
   * the registry's own 401 says what this repository needs.
   */
  async knownAuthorization(call: RegistryCall): Promise<string | undefined> {
    const token = this.#cache.tokens.get(this.#tokenKey);
    if (token !== undefined) return `Bearer ${token}`;
    const challenge = this.#cache.challenges.get(this.#registryKey());
    if (challenge === undefined) return undefined;
    try {
      return await this.#authorizationFor(challenge, [this.scope], call);
    } catch (error) {
      this.#cache.challenges.delete(this.#registryKey());
      // Out of time or cancelled: nothing else can be tried in this request.
      if (error instanceof RegistryError && (error.code === 'TIMEOUT' || error.code === 'ABORTED'))
        throw error;
      // Only a Bearer challenge can fail here (answering Basic sends nothing).
      this.#failedHint = { challenge: challenge as BearerChallenge, error };
      return undefined;
    }
  }

  /** The Authorization that answers `challenge`, which the registry just sent with a 401. */
  async answer(challenge: RegistryChallenge, call: RegistryCall): Promise<string | undefined> {
    this.forgetToken();
    // The same realm failed a moment ago in this request: its error is the answer.
    const failed = this.#failedHint;
    if (failed !== undefined && sameChallenge(failed.challenge, challenge)) throw failed.error;
    // A scope the registry names in its challenge is asked for too (it knows what it checks).
    const named = challenge.scheme === 'bearer' ? challenge.scope : undefined;
    const scopes = named === undefined || named === this.scope ? [this.scope] : [this.scope, named];
    return this.#authorizationFor(challenge, scopes, call);
  }

  /** Remembers `challenge`, which just led to access, so later requests authenticate up front. */
  remember(challenge: RegistryChallenge): void {
    const clock = this.#cache.clock;
    this.#cache.challenges.set(this.#registryKey(), challenge, clock.now() + CHALLENGE_TTL_MS);
  }

  forgetToken(): void {
    this.#cache.tokens.delete(this.#tokenKey);
  }

  async #authorizationFor(
    challenge: RegistryChallenge,
    scopes: readonly string[],
    call: RegistryCall,
  ): Promise<string | undefined> {
    const credential = this.#credential;
    if (challenge.scheme === 'basic') {
      return credential?.kind === 'basic'
        ? basicAuthorization(credential.username, credential.password)
        : undefined;
    }
    const issued = await requestToken(this.#transport, challenge, scopes, credential, this.#repository, call);
    const clock = this.#cache.clock;
    const ttl = Math.min(issued.expiresInSeconds * 1000 - TOKEN_EXPIRY_MARGIN_MS, this.#cache.maxTokenTtlMs);
    this.#cache.tokens.set(this.#tokenKey, issued.token, clock.now() + ttl);
    return `Bearer ${issued.token}`;
  }

  #registryKey(): string {
    return this.#repository.registry.toLowerCase();
  }
}

/**
 * The error for a 401 to credentials just obtained. A fresh token answered with
 * `insufficient_scope` means the credentials lack access; any other 401 to a fresh token means
 * the registry does not accept what its own token server issues: a loop that retrying cannot end.
 */
function refusal(
  first: RegistryChallenge,
  again: RegistryChallenge | undefined,
  repository: RepositoryRef,
  scope: string,
): RegistryError {
  const context = { ...repository, status: 401 };
  if (first.scheme === 'basic')
    return new RegistryError('UNAUTHORIZED', context, 'refused the configured credentials');
  if (again?.scheme === 'bearer' && again.error === 'insufficient_scope') {
    return new RegistryError(
      'UNAUTHORIZED',
      context,
      `the token issued for ${scope} does not grant it (insufficient_scope): the credentials lack access to this repository`,
    );
  }
  return new RegistryError(
    'AUTH_LOOP',
    context,
    `answered 401 again to a token its token server had just issued for ${scope}; ` +
      'the token server and the registry disagree (service, issuer or signing key), giving up',
  );
}

type BearerChallenge = Extract<RegistryChallenge, { scheme: 'bearer' }>;

/** Whether a challenge sends Signet to the same token realm, for the same service, as `a`. */
function sameChallenge(a: BearerChallenge, b: RegistryChallenge): boolean {
  return b.scheme === 'bearer' && a.realm === b.realm && a.service === b.service;
}

function withAuthorization(request: HttpRequest, authorization: string | undefined): HttpRequest {
  if (authorization === undefined) return request;
  return { ...request, headers: { ...request.headers, authorization } };
}

/** A one-way name for a credential, for cache keys. */
function fingerprint(credential: RegistryCredential | undefined): string {
  if (credential === undefined) return 'anonymous';
  return createHash('sha256').update(JSON.stringify(credential)).digest('hex').slice(0, 32);
}
