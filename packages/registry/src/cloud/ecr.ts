// Amazon ECR: the AWS SDK's default credential chain (IRSA web identity, EKS Pod Identity, the
// instance role, environment), `GetAuthorizationToken` for the registry named by the host, and
// the token as Basic credentials (`AWS:<password>`), kept until shortly before it expires (12 h).
// Public ECR (`public.ecr.aws`) uses ECR Public's `GetAuthorizationToken` (us-east-1).

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

/** Which ECR registry a host is: its registry (account) ID and region; `public` for ECR Public. */
export type EcrRegistry =
  | { readonly kind: 'private'; readonly registryId: string; readonly region: string }
  | { readonly kind: 'public' };

// <account>.dkr.ecr[-fips].<region>.amazonaws.com[.cn], and the dual-stack <account>.dkr-ecr.<region>.on.aws
const PRIVATE_HOST =
  /^(\d{12})\.dkr(?:\.ecr(?:-fips)?|-ecr)\.([a-z0-9-]+)\.(?:amazonaws\.com(?:\.cn)?|on\.aws|sc2s\.sgov\.gov|c2s\.ic\.gov)$/;

/** The ECR registry `host` names, or `undefined` when it is not ECR. */
export function ecrRegistryOf(host: string): EcrRegistry | undefined {
  const name = host.toLowerCase();
  if (name === 'public.ecr.aws') return { kind: 'public' };
  const match = PRIVATE_HOST.exec(name);
  return match ? { kind: 'private', registryId: match[1] as string, region: match[2] as string } : undefined;
}

export interface EcrCredentialsOptions {
  /** Which hosts are ECR registries (default: ECR's own host names, `ecrRegistryOf`). */
  readonly registryOf?: (host: string) => EcrRegistry | undefined;
  /** Whether `public.ecr.aws` gets credentials too (default true; anonymous pulls work without). */
  readonly publicEcr?: boolean;
  /** AWS API endpoint (default: the SDK's, or `AWS_ENDPOINT_URL_ECR` / `AWS_ENDPOINT_URL`). */
  readonly endpoint?: string;
  /** Proxy variables for the AWS API calls (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /** Clock for token expiry (default `Date.now`). */
  readonly now?: () => number;
  /** Tokens are renewed this long before they expire (default 15 minutes). */
  readonly renewBeforeMs?: number;
  /** Loads the SDK (default: the real `@aws-sdk/client-ecr` and `@aws-sdk/client-ecr-public`). */
  readonly loadSdk?: () => Promise<EcrSdk>;
}

interface AuthorizationData {
  readonly authorizationToken?: string | undefined;
  readonly expiresAt?: Date | undefined;
}

/** The part of the AWS SDK this provider uses. */
export interface EcrSdk {
  getPrivateToken(
    region: string,
    registryId: string,
    signal: AbortSignal,
  ): Promise<AuthorizationData | undefined>;
  getPublicToken(signal: AbortSignal): Promise<AuthorizationData | undefined>;
}

export class EcrCredentials implements CredentialProvider {
  readonly name = 'ecr';
  readonly #options: EcrCredentialsOptions;
  readonly #now: () => number;
  readonly #cache: CredentialCache;
  #sdk: Promise<EcrSdk> | undefined;

  constructor(options: EcrCredentialsOptions = {}) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#cache = new CredentialCache(this.#now, options.renewBeforeMs ?? 15 * 60_000);
  }

  handles(registry: string): boolean {
    const found = (this.#options.registryOf ?? ecrRegistryOf)(registry);
    return found !== undefined && (found.kind === 'private' || this.#options.publicEcr !== false);
  }

  /**
   * The ECR token for the registry. Public ECR serves everyone anonymously: when the identity
   * cannot get an ECR Public token, Signet goes on without one (only the rate limit differs).
   */
  async credentialFor(
    repository: RepositoryRef,
    context: ProviderContext,
  ): Promise<RegistryCredential | undefined> {
    const registry = (this.#options.registryOf ?? ecrRegistryOf)(repository.registry);
    if (registry === undefined) {
      throw new RegistryError(
        'INVALID_REQUEST',
        repository,
        'ecr credentials asked for a registry that is not ECR',
      );
    }
    const key = registry.kind === 'public' ? 'public' : `${registry.region}/${registry.registryId}`;
    const credential = this.#cache.get(key, () =>
      withinCall(context, repository, 'asking ECR for an authorization token', async (signal) => {
        let data: AuthorizationData | undefined;
        try {
          const sdk = await this.#loadSdk();
          data =
            registry.kind === 'public'
              ? await sdk.getPublicToken(signal)
              : await sdk.getPrivateToken(registry.region, registry.registryId, signal);
        } catch (error) {
          throw providerFailure('ECR', repository, 'GetAuthorizationToken', error);
        }
        return tokenCredential(data, repository, this.#now());
      }),
    );
    if (registry.kind === 'private') return credential;
    return credential.catch((error: unknown) => {
      if (error instanceof RegistryError && error.code === 'CREDENTIALS_FAILED') return undefined;
      throw error;
    });
  }

  #loadSdk(): Promise<EcrSdk> {
    this.#sdk ??= (this.#options.loadSdk ?? (() => loadAwsSdk(this.#options)))();
    // A failed load is not kept: the next admission tries again.
    this.#sdk.catch(() => {
      this.#sdk = undefined;
    });
    return this.#sdk;
  }
}

/** `AWS:<password>` from the base64 token; kept for an hour when the API gives no expiry. */
function tokenCredential(
  data: AuthorizationData | undefined,
  repository: RepositoryRef,
  now: number,
): { credential: RegistryCredential; expiresAt: number } {
  const decoded = Buffer.from(data?.authorizationToken ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) {
    throw new RegistryError(
      'CREDENTIALS_FAILED',
      repository,
      'ECR credentials: GetAuthorizationToken returned no usable authorization token',
    );
  }
  const expiresAt = data?.expiresAt?.getTime() ?? now + 60 * 60_000;
  return {
    credential: { kind: 'basic', username: decoded.slice(0, colon), password: decoded.slice(colon + 1) },
    expiresAt,
  };
}

/** The real SDK, loaded on first use; API calls honour the proxy variables. */
async function loadAwsSdk(options: EcrCredentialsOptions): Promise<EcrSdk> {
  const [ecr, ecrPublic, { Agent: HttpAgent }, { Agent: HttpsAgent }] = await Promise.all([
    importSdk<typeof import('@aws-sdk/client-ecr')>('ecr', '@aws-sdk/client-ecr'),
    importSdk<typeof import('@aws-sdk/client-ecr-public')>('ecr', '@aws-sdk/client-ecr-public'),
    import('node:http'),
    import('node:https'),
  ]);
  const env = options.env ?? process.env;
  const requestHandler = {
    httpsAgent: new HttpsAgent({ keepAlive: true, proxyEnv: env }),
    httpAgent: new HttpAgent({ keepAlive: true, proxyEnv: env }),
  };
  const endpoint = options.endpoint === undefined ? {} : { endpoint: options.endpoint };
  const clients = new Map<string, InstanceType<typeof ecr.ECRClient>>();
  let publicClient: InstanceType<typeof ecrPublic.ECRPUBLICClient> | undefined;
  return {
    async getPrivateToken(region, registryId, signal) {
      let client = clients.get(region);
      if (client === undefined) {
        client = new ecr.ECRClient({ region, requestHandler, ...endpoint });
        clients.set(region, client);
      }
      const output = await client.send(new ecr.GetAuthorizationTokenCommand({ registryIds: [registryId] }), {
        abortSignal: signal,
      });
      return output.authorizationData?.[0];
    },
    async getPublicToken(signal) {
      // ECR Public's API lives in us-east-1 only.
      publicClient ??= new ecrPublic.ECRPUBLICClient({ region: 'us-east-1', requestHandler, ...endpoint });
      const output = await publicClient.send(new ecrPublic.GetAuthorizationTokenCommand({}), {
        abortSignal: signal,
      });
      return output.authorizationData;
    },
  };
}
