// Registry credentials from a cloud identity (the node's or the workload's): ECR, Artifact
// Registry / GCR, ACR. A provider applies only to its own registry hosts, is asked only when no
// pull secret matched, and never sends a cloud token anywhere else. Its failures are registry
// errors (`CREDENTIALS_FAILED`, an infrastructure failure) naming the provider and the cause.
// SDKs load on first use, so a deployment that enables no provider never loads one.

import type { RegistryCall } from '../deadline.js';
import { RegistryError } from '../errors.js';
import type { HttpTransport } from '../http.js';
import type { RegistryCredential } from '../pull-secrets.js';
import type { RepositoryRef } from '../references.js';
import { SdkNotInstalledError } from './sdk.js';

/** What a provider may use while producing a credential. */
export interface ProviderContext {
  /** The registry transport (proxies, CA bundle): for requests to the registry's own host only. */
  readonly transport: HttpTransport;
  readonly call: RegistryCall;
}

export interface CredentialProvider {
  /** For messages: `ecr`, `gcp`, `acr`. */
  readonly name: string;
  /** Whether `registry` (`host[:port]`, as in image references) is one of this provider's. */
  handles(registry: string): boolean;
  /**
   * A credential for `repository`, or `undefined` to go on anonymously (where anonymous access is
   * the norm, as on public ECR); throws `RegistryError` (`CREDENTIALS_FAILED`, `TIMEOUT`, ...).
   */
  credentialFor(repository: RepositoryRef, context: ProviderContext): Promise<RegistryCredential | undefined>;
}

/** The provider names a deployment can enable. */
export type CloudProviderName = 'ecr' | 'gcp' | 'acr';

/** A `CREDENTIALS_FAILED` error: provider, what it was doing, the cause's first line. */
export function providerFailure(
  provider: string,
  repository: RepositoryRef,
  doing: string,
  cause: unknown,
): RegistryError {
  if (cause instanceof RegistryError) return cause;
  if (cause instanceof SdkNotInstalledError) {
    return new RegistryError('CREDENTIALS_FAILED', repository, cause.message, {
      cause,
      causeInMessage: true,
    });
  }
  const text =
    cause instanceof Error
      ? `${cause.name === 'Error' ? '' : `${cause.name}: `}${cause.message}`
      : String(cause);
  const line = text.replace(/\n[\s\S]*$/, '').slice(0, 300);
  return new RegistryError(
    'CREDENTIALS_FAILED',
    repository,
    `${provider} credentials: ${doing} failed: ${line}`,
    {
      cause,
    },
  );
}

/** Runs `work` until the call's deadline (on the transport's clock) or cancellation, whichever comes first. */
export async function withinCall<T>(
  context: ProviderContext,
  repository: RepositoryRef,
  what: string,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const { call } = context;
  if (call.signal.aborted) throw new RegistryError('ABORTED', repository, 'the request was cancelled');
  const controller = new AbortController();
  const remaining = Math.max(0, call.deadline - context.transport.clock.now());
  const { promise: stop, reject } = Promise.withResolvers<never>();
  const fail = (code: 'TIMEOUT' | 'ABORTED') => {
    controller.abort();
    const problem = code === 'TIMEOUT' ? `the deadline passed while ${what}` : 'the request was cancelled';
    reject(new RegistryError(code, repository, problem));
  };
  const timer = setTimeout(() => fail('TIMEOUT'), remaining);
  const onAbort = () => fail('ABORTED');
  call.signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await Promise.race([work(controller.signal), stop]);
  } finally {
    clearTimeout(timer);
    call.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Credentials kept per key until shortly before they expire, with one fetch in flight per key:
 * a rollout of 200 Pods asks the cloud once.
 */
export class CredentialCache {
  readonly #entries = new Map<string, { readonly credential: RegistryCredential; readonly until: number }>();
  readonly #flights = new Map<string, Promise<RegistryCredential>>();
  readonly #now: () => number;
  readonly #marginMs: number;
  readonly #maxEntries: number;

  constructor(now: () => number, marginMs: number, maxEntries = 64) {
    this.#now = now;
    this.#marginMs = marginMs;
    this.#maxEntries = maxEntries;
  }

  async get(
    key: string,
    fetch: () => Promise<{ credential: RegistryCredential; expiresAt: number }>,
  ): Promise<RegistryCredential> {
    const entry = this.#entries.get(key);
    if (entry !== undefined && entry.until > this.#now()) return entry.credential;
    this.#entries.delete(key);
    let flight = this.#flights.get(key);
    if (flight === undefined) {
      flight = fetch().then(({ credential, expiresAt }) => {
        const until = expiresAt - this.#marginMs;
        if (until > this.#now()) {
          if (this.#entries.size >= this.#maxEntries)
            this.#entries.delete(this.#entries.keys().next().value as string);
          this.#entries.set(key, { credential, until });
        }
        return credential;
      });
      // Nothing replaces a flight while it runs, so the one to forget is this one.
      const forget = () => this.#flights.delete(key);
      flight.then(forget, forget);
      this.#flights.set(key, flight);
    }
    return flight;
  }
}
