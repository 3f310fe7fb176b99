// The token half of the registry Bearer flow (distribution "token authentication"): ask the realm
// named in the challenge for a token for `service` and `scope`, with Basic credentials, an OAuth2
// refresh token (`identitytoken`), or anonymously. The credentials are sent only to the realm and
// never appear in an error.
import type { RegistryChallenge } from './challenge.js';
import type { RegistryCall } from './deadline.js';
import { displayUrl, RegistryError, type RegistryErrorContext } from './errors.js';
import type { HttpTransport } from './http.js';
import type { RegistryCredential } from './pull-secrets.js';

export interface IssuedToken {
  readonly token: string;
  /** Seconds the token is valid for (60 when the server does not say, as the spec prescribes). */
  readonly expiresInSeconds: number;
}

/** Token responses are small JSON documents; anything bigger is not one. */
const TOKEN_RESPONSE_MAX_BYTES = 256 * 1024;
/** A token goes into a header: visible ASCII only. */
const HEADER_SAFE = /^[\x21-\x7e]+$/;

export async function requestToken(
  transport: HttpTransport,
  challenge: Extract<RegistryChallenge, { scheme: 'bearer' }>,
  scopes: readonly string[],
  credential: RegistryCredential | undefined,
  context: RegistryErrorContext,
  call: RegistryCall,
): Promise<IssuedToken> {
  const realm = realmUrl(challenge, context);
  const service = challenge.service;
  const form = new URLSearchParams();
  if (service !== undefined) form.set('service', service);
  for (const scope of scopes) form.append('scope', scope);
  let response: Awaited<ReturnType<HttpTransport['send']>>;
  if (credential?.kind === 'identity-token') {
    form.set('grant_type', 'refresh_token');
    form.set('client_id', 'signet');
    form.set('refresh_token', credential.token);
    response = await transport.send(
      {
        method: 'POST',
        url: realm,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        maxBytes: TOKEN_RESPONSE_MAX_BYTES,
        context,
      },
      call,
    );
  } else {
    const url = new URL(realm);
    for (const [name, value] of form) url.searchParams.append(name, value);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (credential) headers.authorization = basicAuthorization(credential.username, credential.password);
    response = await transport.send(
      { method: 'GET', url, headers, maxBytes: TOKEN_RESPONSE_MAX_BYTES, context },
      call,
    );
  }
  return readTokenResponse(response, realm, { ...context, status: response.status });
}

function realmUrl(challenge: { readonly realm: string }, context: RegistryErrorContext): URL {
  try {
    const url = new URL(challenge.realm);
    if (url.username !== '' || url.password !== '') throw new TypeError('user info in the realm');
    return url;
  } catch (error) {
    throw new RegistryError('MALFORMED', context, 'the Bearer challenge has no valid realm URL', {
      cause: error,
    });
  }
}

function readTokenResponse(
  response: { readonly status: number; readonly body: Uint8Array },
  realm: URL,
  context: RegistryErrorContext,
): IssuedToken {
  const where = `the token server ${displayUrl(realm)}`;
  if (response.status === 401 || response.status === 403) {
    throw new RegistryError('UNAUTHORIZED', context, `${where} refused the credentials (${response.status})`);
  }
  if (response.status !== 200) {
    throw new RegistryError('UNEXPECTED_STATUS', context, `${where} answered ${response.status}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(response.body).toString('utf8'));
  } catch {
    // The body is a credential: neither it nor the parser's quote of it goes into the error.
    throw new RegistryError('MALFORMED', context, `${where} answered with invalid JSON`);
  }
  const fields = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const token = [fields.token, fields.access_token].find(
    (value) => typeof value === 'string' && value !== '',
  );
  if (typeof token !== 'string' || !HEADER_SAFE.test(token)) {
    throw new RegistryError('MALFORMED', context, `${where} answered without a usable token or access_token`);
  }
  const expiresIn = fields.expires_in;
  const expiresInSeconds = typeof expiresIn === 'number' && expiresIn > 0 ? expiresIn : 60;
  return { token, expiresInSeconds };
}

export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}
