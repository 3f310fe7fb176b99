// What a caller is told when a host Signet calls out to (a TUF mirror, a remote policy, a KMS)
// cannot be reached: "could not reach HOST" and a short class of cause. Never the transport's own
// text: OpenSSL's `wrong version number` or `self-signed certificate`, echoed into a policy's
// status or an admission warning, would tell whoever wrote the URL what listens on which port of
// which address. The original error stays as `cause`, for the log.

/** Why a host could not be reached, in classes coarse enough to map nothing. */
export type UnreachableReason = 'private-address' | 'timeout' | 'name' | 'connection' | 'tls';

const TEXT: Readonly<Record<UnreachableReason, string>> = {
  'private-address':
    'it is or resolves to a loopback, private or link-local address (an operator can allow the host with --private-host)',
  timeout: 'no answer in time',
  name: 'its name does not resolve',
  connection: 'the connection failed',
  tls: 'the TLS handshake failed',
};

export class UnreachableError extends Error {
  override readonly name = 'UnreachableError';
  readonly code = 'SIGNET_UNREACHABLE';
  /** `host[:port]` as the caller named it. */
  readonly host: string;
  readonly reason: UnreachableReason;

  constructor(host: string, reason: UnreachableReason, options?: ErrorOptions) {
    super(`could not reach ${host}: ${TEXT[reason]}`, options);
    this.host = host;
    this.reason = reason;
  }
}

const NAME_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EAI_NODATA']);
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'TimeoutError',
  'AbortError',
  'ABORT_ERR',
]);
const TLS_CODE =
  /^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|EPROTO$|HOSTNAME_MISMATCH$)/;

/** The `code`s and names along an error's cause chain (and of an AggregateError's errors). */
function markers(error: unknown, depth = 0): string[] {
  if (depth > 6 || typeof error !== 'object' || error === null) return [];
  const found: string[] = [];
  const { code, name, cause, errors } = error as {
    code?: unknown;
    name?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === 'string') found.push(code);
  if (typeof name === 'string') found.push(name);
  if (Array.isArray(errors)) for (const inner of errors) found.push(...markers(inner, depth + 1));
  return [...found, ...markers(cause, depth + 1)];
}

/** The class of a failure to reach a host (`connection` when nothing says more). */
export function unreachableReason(error: unknown): UnreachableReason {
  const found = markers(error);
  if (found.includes('SIGNET_PRIVATE_ADDRESS')) return 'private-address';
  if (found.some((m) => TLS_CODE.test(m))) return 'tls';
  if (found.some((m) => NAME_CODES.has(m))) return 'name';
  if (found.some((m) => TIMEOUT_CODES.has(m))) return 'timeout';
  return 'connection';
}

/** `error` as an {@link UnreachableError} for `host` (itself when it already is one). */
export function unreachable(host: string, error: unknown): UnreachableError {
  if (error instanceof UnreachableError) return error;
  return new UnreachableError(host, unreachableReason(error), { cause: error });
}

/**
 * Whether `error` is a failure of the network (connection, TLS, name resolution, time), as
 * opposed to an answer: a KMS saying "access denied" is an answer, and its text is kept.
 */
export function isTransportFailure(error: unknown): boolean {
  const found = markers(error);
  return found.some(
    (m) =>
      m === 'SIGNET_PRIVATE_ADDRESS' ||
      TLS_CODE.test(m) ||
      NAME_CODES.has(m) ||
      TIMEOUT_CODES.has(m) ||
      /^(ECONN|EHOST|ENET|EPIPE|EADDR|UND_ERR_SOCKET|UND_ERR_CLOSED)/.test(m),
  );
}
