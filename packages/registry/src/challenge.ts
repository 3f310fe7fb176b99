// `WWW-Authenticate` parsing (RFC 9110 section 11.6.1): a list of challenges, each a scheme and
// `name=value` parameters whose values may be quoted strings. Registries send
// `Bearer realm="https://auth.example/token",service="registry.example",scope="repository:app:pull"`
// or `Basic realm="..."`, sometimes both in one header.

export interface AuthChallenge {
  /** Lowercase: `bearer`, `basic`. */
  readonly scheme: string;
  /** Parameter names lowercased; values unquoted. */
  readonly params: Readonly<Record<string, string>>;
}

const TOKEN_END = /[\s,="]/;

/** Every challenge in the header, in order; unreadable parts are skipped, never thrown. */
export function parseChallenges(header: string): AuthChallenge[] {
  const challenges: { scheme: string; params: Record<string, string> }[] = [];
  let pos = 0;
  const skip = (pattern: RegExp) => {
    while (pos < header.length && pattern.test(header.charAt(pos))) pos++;
  };
  const readToken = () => {
    const start = pos;
    while (pos < header.length && !TOKEN_END.test(header.charAt(pos))) pos++;
    return header.slice(start, pos);
  };
  while (pos < header.length) {
    skip(/[\s,]/);
    const token = readToken();
    skip(/\s/);
    if (header.charAt(pos) === '=') {
      pos++;
      skip(/\s/);
      const value = header.charAt(pos) === '"' ? readQuoted() : readToken();
      const current = challenges.at(-1);
      if (current && token !== '') current.params[token.toLowerCase()] = value;
    } else if (token !== '') {
      challenges.push({ scheme: token.toLowerCase(), params: {} });
    } else {
      pos++;
    }
  }
  return challenges;

  function readQuoted(): string {
    let value = '';
    for (pos++; pos < header.length; pos++) {
      const char = header.charAt(pos);
      if (char === '"') {
        pos++;
        break;
      }
      if (char === '\\') pos++;
      value += header.charAt(pos);
    }
    return value;
  }
}

/** What Signet can answer: a Bearer challenge with its token realm, or Basic. */
export type RegistryChallenge =
  | {
      readonly scheme: 'bearer';
      /** The token endpoint URL, as sent (validated when used). */
      readonly realm: string;
      readonly service: string | undefined;
      readonly scope: string | undefined;
      /** RFC 6750 error code, on a 401 to a token: `invalid_token`, `insufficient_scope`. */
      readonly error: string | undefined;
    }
  | { readonly scheme: 'basic' };

/** The challenge to answer: Bearer when offered with a realm (it also works anonymously), else Basic. */
export function pickChallenge(header: string | null): RegistryChallenge | undefined {
  const challenges = parseChallenges(header ?? '');
  for (const { scheme, params } of challenges) {
    if (scheme === 'bearer' && params.realm !== undefined) {
      return {
        scheme,
        realm: params.realm,
        service: params.service,
        scope: params.scope,
        error: params.error,
      };
    }
  }
  return challenges.some((challenge) => challenge.scheme === 'basic') ? { scheme: 'basic' } : undefined;
}
