// Azure Container Registry: a Microsoft Entra token for the workload (Azure workload identity:
// AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE, through @azure/identity), exchanged
// at the registry's own `/oauth2/exchange` for an ACR refresh token, which the Bearer flow then
// trades for access tokens at the registry's token endpoint (as `docker login` with a token does).

import { apiUrl } from '../endpoint.js';
import { RegistryError } from '../errors.js';
import type { RegistryCredential } from '../pull-secrets.js';
import type { RepositoryRef } from '../references.js';
import {
  CredentialCache,
  type CredentialProvider,
  type ProviderContext,
  providerFailure,
  withinCall,
} from './provider.js';
import { importSdk } from './sdk.js';

/** The user name ACR expects with a refresh token. */
export const ACR_REFRESH_TOKEN_USER = '00000000-0000-0000-0000-000000000000';
const SCOPE = 'https://containerregistry.azure.net/.default';

export function isAzureRegistry(host: string): boolean {
  return /\.azurecr\.(io|cn|us|de)$/.test(host.toLowerCase());
}

/** Where Entra tokens come from. */
export interface EntraTokenSource {
  token(scope: string, signal: AbortSignal): Promise<{ readonly token: string; readonly expiresAt: number }>;
}

export interface AcrCredentialsOptions {
  readonly handles?: (host: string) => boolean;
  /** The Entra tenant, sent with the exchange (default `AZURE_TENANT_ID`). */
  readonly tenantId?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly now?: () => number;
  readonly renewBeforeMs?: number;
  /**
   * Options for @azure/identity's credential, e.g. `{ disableInstanceDiscovery: true }` where the
   * authority host (AZURE_AUTHORITY_HOST) is not one Microsoft's instance discovery knows.
   */
  readonly identityOptions?: { readonly disableInstanceDiscovery?: boolean };
  /** Loads the SDK (default: @azure/identity's `DefaultAzureCredential`, which includes workload identity). */
  readonly loadSdk?: () => Promise<EntraTokenSource>;
}

const EXCHANGE_MAX_BYTES = 256 * 1024;

export class AcrCredentials implements CredentialProvider {
  readonly name = 'acr';
  readonly #options: AcrCredentialsOptions;
  readonly #now: () => number;
  readonly #cache: CredentialCache;
  #source: Promise<EntraTokenSource> | undefined;

  constructor(options: AcrCredentialsOptions = {}) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#cache = new CredentialCache(this.#now, options.renewBeforeMs ?? 5 * 60_000);
  }

  handles(registry: string): boolean {
    return (this.#options.handles ?? isAzureRegistry)(registry);
  }

  credentialFor(repository: RepositoryRef, context: ProviderContext): Promise<RegistryCredential> {
    return this.#cache.get(repository.registry.toLowerCase(), () =>
      withinCall(context, repository, 'getting ACR credentials', async (signal) => {
        let entra: { token: string; expiresAt: number };
        try {
          entra = await (await this.#loadSource()).token(SCOPE, signal);
        } catch (error) {
          throw providerFailure(
            'ACR',
            repository,
            'getting a Microsoft Entra token (workload identity)',
            error,
          );
        }
        const refreshToken = await this.#exchange(repository, entra.token, context);
        const credential: RegistryCredential = {
          kind: 'identity-token',
          username: ACR_REFRESH_TOKEN_USER,
          token: refreshToken,
        };
        // ACR refresh tokens last about three hours; renewing with the Entra token is safe.
        return { credential, expiresAt: Math.min(entra.expiresAt, this.#now() + 3 * 60 * 60_000) };
      }),
    );
  }

  /** POST /oauth2/exchange on the registry itself: the Entra token never goes to another host. */
  async #exchange(repository: RepositoryRef, accessToken: string, context: ProviderContext): Promise<string> {
    const insecure = context.transport.isInsecure(repository.registry);
    const url = new URL('/oauth2/exchange', apiUrl(repository, insecure, 'x'));
    const form = new URLSearchParams({
      grant_type: 'access_token',
      service: repository.registry,
      access_token: accessToken,
    });
    const tenant = this.#options.tenantId ?? (this.#options.env ?? process.env).AZURE_TENANT_ID;
    if (tenant) form.set('tenant', tenant);
    const response = await context.transport.send(
      {
        method: 'POST',
        url,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        maxBytes: EXCHANGE_MAX_BYTES,
        context: { registry: repository.registry, repository: repository.repository },
      },
      context.call,
    );
    const fail = (why: string) =>
      new RegistryError(
        'CREDENTIALS_FAILED',
        { ...repository, status: response.status },
        `ACR credentials: ${why}`,
      );
    if (response.status !== 200) throw fail(`the registry refused the token exchange (${response.status})`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(response.body).toString('utf8'));
    } catch {
      throw fail('the token exchange answered invalid JSON');
    }
    const token = (parsed as { refresh_token?: unknown } | null)?.refresh_token;
    if (typeof token !== 'string' || !/^[\x21-\x7e]+$/.test(token))
      throw fail('the token exchange returned no refresh token');
    return token;
  }

  #loadSource(): Promise<EntraTokenSource> {
    const load = () => loadAzureIdentity(this.#options.identityOptions ?? {});
    this.#source ??= (this.#options.loadSdk ?? load)();
    this.#source.catch(() => {
      this.#source = undefined;
    });
    return this.#source;
  }
}

async function loadAzureIdentity(
  options: NonNullable<AcrCredentialsOptions['identityOptions']>,
): Promise<EntraTokenSource> {
  // The default chain: environment, then workload identity (AZURE_FEDERATED_TOKEN_FILE and friends,
  // set by AKS's workload identity webhook), then managed identity.
  const { DefaultAzureCredential } = await importSdk<typeof import('@azure/identity')>(
    'acr',
    '@azure/identity',
  );
  const credential = new DefaultAzureCredential({ ...options });
  return {
    token: async (scope, signal) => {
      const result = await credential.getToken(scope, { abortSignal: signal });
      if (result === null) throw new Error('no token was returned');
      return { token: result.token, expiresAt: result.expiresOnTimestamp };
    },
  };
}
