// A tiny OpenID Connect issuer on loopback: the discovery document and JWKS Fulcio fetches to
// verify identity tokens, and tokens minted by the test. Only what Fulcio (through go-oidc) reads:
// `issuer`, `jwks_uri`, the ES256 key, and the token claims of the identity being tested.
import { createPrivateKey, generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';

export interface OidcIssuer {
  /** `http://127.0.0.1:PORT`: the `iss` of every token, and the issuer Fulcio is configured with. */
  readonly url: string;
  /** A signed ID token (ES256) for `audience` (default `sigstore`) with these claims. */
  mintToken(claims: Readonly<Record<string, unknown>>, options?: MintOptions): string;
  stop(): Promise<void>;
}

export interface MintOptions {
  readonly audience?: string;
  /** Lifetime in seconds (default 600). */
  readonly lifetimeSeconds?: number;
}

/** What a GitHub Actions job's token says about the run (the claims Fulcio's github-workflow issuer needs). */
export interface WorkflowRun {
  /** `acme/app` */
  readonly repository: string;
  /** Path of the workflow file in the repository, e.g. `.github/workflows/release.yml`. */
  readonly workflowPath: string;
  /** Git ref, default `refs/heads/main`. */
  readonly ref?: string;
  /** Commit (40 hex), default a fixed one. */
  readonly sha?: string;
  readonly eventName?: string;
}

/**
 * The claims of a GitHub Actions OIDC token for `run`: Fulcio's `github-workflow` issuer type makes
 * the certificate's SAN `https://github.com/<job_workflow_ref>` and adds the workflow extensions.
 */
export function workflowClaims(run: WorkflowRun): Record<string, string> {
  const ref = run.ref ?? 'refs/heads/main';
  const sha = run.sha ?? '0123456789abcdef0123456789abcdef01234567';
  const owner = run.repository.split('/')[0] ?? run.repository;
  const workflowRef = `${run.repository}/${run.workflowPath}@${ref}`;
  return {
    sub: `repo:${run.repository}:ref:${ref}`,
    job_workflow_ref: workflowRef,
    job_workflow_sha: sha,
    workflow_ref: workflowRef,
    workflow_sha: sha,
    sha,
    ref,
    event_name: run.eventName ?? 'push',
    repository: run.repository,
    repository_id: '1000',
    repository_owner: owner,
    repository_owner_id: '2000',
    repository_visibility: 'private',
    workflow: 'release',
    runner_environment: 'github-hosted',
    run_id: '3000',
    run_attempt: '1',
  };
}

function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

/** Starts the issuer on a free loopback port with a fresh P-256 key. */
export async function startOidcIssuer(): Promise<OidcIssuer> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = randomUUID();
  const jwk = {
    ...(publicKey.export({ format: 'jwk' }) as Record<string, unknown>),
    kid,
    alg: 'ES256',
    use: 'sig',
  };
  let url = '';
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    const json = (body: unknown) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (path === '/.well-known/openid-configuration') {
      json({
        issuer: url,
        jwks_uri: `${url}/jwks`,
        authorization_endpoint: `${url}/authorize`,
        token_endpoint: `${url}/token`,
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['ES256'],
      });
    } else if (path === '/jwks') {
      json({ keys: [jwk] });
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('OIDC issuer has no TCP address');
  url = `http://127.0.0.1:${address.port}`;
  const key: KeyObject = createPrivateKey(privateKey.export({ format: 'pem', type: 'pkcs8' }));
  return {
    url,
    mintToken(claims, options = {}) {
      const now = Math.floor(Date.now() / 1000);
      const header = base64url(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid }));
      const body = base64url(
        JSON.stringify({
          iss: url,
          aud: options.audience ?? 'sigstore',
          iat: now,
          nbf: now - 5,
          exp: now + (options.lifetimeSeconds ?? 600),
          jti: randomUUID(),
          ...claims,
        }),
      );
      // JOSE's ES256 signature is r||s, not DER.
      const signature = sign('sha256', Buffer.from(`${header}.${body}`), { key, dsaEncoding: 'ieee-p1363' });
      return `${header}.${body}.${base64url(signature)}`;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
