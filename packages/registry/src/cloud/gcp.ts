// Artifact Registry and Container Registry: Google's application default credentials (GKE
// Workload Identity through the metadata server, a service account key file named by
// GOOGLE_APPLICATION_CREDENTIALS, ...) give an OAuth access token, which the registry takes as the
// password of the user `oauth2accesstoken`. google-auth-library caches and refreshes the token.

import type { RegistryCredential } from '../pull-secrets.js';
import type { RepositoryRef } from '../references.js';
import { type CredentialProvider, type ProviderContext, providerFailure, withinCall } from './provider.js';
import { importSdk } from './sdk.js';

/** gcr.io and its regional hosts, and Artifact Registry's `<location>-docker.pkg.dev`. */
export function isGoogleRegistry(host: string): boolean {
  const name = host.toLowerCase();
  return name === 'gcr.io' || name.endsWith('.gcr.io') || name.endsWith('-docker.pkg.dev');
}

export interface GcpCredentialsOptions {
  /** Which hosts are Google registries (default `isGoogleRegistry`). */
  readonly handles?: (host: string) => boolean;
  /** Loads the SDK and returns a token source (default: google-auth-library's `GoogleAuth`). */
  readonly loadSdk?: () => Promise<AccessTokenSource>;
}

/** Where access tokens come from. */
export interface AccessTokenSource {
  accessToken(): Promise<string | null | undefined>;
}

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

export class GcpCredentials implements CredentialProvider {
  readonly name = 'gcp';
  readonly #options: GcpCredentialsOptions;
  #source: Promise<AccessTokenSource> | undefined;

  constructor(options: GcpCredentialsOptions = {}) {
    this.#options = options;
  }

  handles(registry: string): boolean {
    return (this.#options.handles ?? isGoogleRegistry)(registry);
  }

  async credentialFor(repository: RepositoryRef, context: ProviderContext): Promise<RegistryCredential> {
    return withinCall(context, repository, 'asking Google for an access token', async () => {
      let token: string | null | undefined;
      try {
        token = await (await this.#loadSource()).accessToken();
      } catch (error) {
        throw providerFailure(
          'GCP',
          repository,
          'getting an access token (application default credentials)',
          error,
        );
      }
      if (!token) {
        throw providerFailure(
          'GCP',
          repository,
          'getting an access token',
          new Error('no token was returned'),
        );
      }
      return { kind: 'basic', username: 'oauth2accesstoken', password: token };
    });
  }

  #loadSource(): Promise<AccessTokenSource> {
    this.#source ??= (this.#options.loadSdk ?? loadGoogleAuth)();
    this.#source.catch(() => {
      this.#source = undefined;
    });
    return this.#source;
  }
}

async function loadGoogleAuth(): Promise<AccessTokenSource> {
  const { GoogleAuth } = await importSdk<typeof import('google-auth-library')>('gcp', 'google-auth-library');
  const auth = new GoogleAuth({ scopes: [SCOPE] });
  return { accessToken: () => auth.getAccessToken() };
}
