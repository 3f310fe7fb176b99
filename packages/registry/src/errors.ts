// The one error type of the registry layer. Callers branch on `code`, never on the message; the
// message names the registry and repository so a person reading an admission denial knows where
// to look. Credentials never appear in a message (URLs are printed without user info or query).

/** What went wrong talking to a registry. */
export type RegistryErrorCode =
  /** Connection refused, DNS failure, reset: nothing usable answered. */
  | 'UNREACHABLE'
  /** The call's deadline passed (connecting, waiting, or reading a slow body). */
  | 'TIMEOUT'
  /** The caller's `AbortSignal` fired. */
  | 'ABORTED'
  /** The registry or its token server refused the credentials (401/403). */
  | 'UNAUTHORIZED'
  /** A cloud credential provider (ECR, GCP, ACR) could not produce credentials. */
  | 'CREDENTIALS_FAILED'
  /** A fresh token was issued but the registry still answered 401. */
  | 'AUTH_LOOP'
  /** The manifest, blob or tag does not exist. */
  | 'NOT_FOUND'
  /** Content does not hash to the digest it was asked for (or announced). */
  | 'DIGEST_MISMATCH'
  /** A body, or its announced length, is over the configured cap. */
  | 'TOO_LARGE'
  /** Unparseable or invalid JSON, headers, media types or descriptors. */
  | 'MALFORMED'
  /** Redirects went in a circle or past the hop limit. */
  | 'REDIRECT_LOOP'
  /** 429 until retries or the deadline ran out. */
  | 'RATE_LIMITED'
  /** 5xx until retries or the deadline ran out. */
  | 'SERVER_ERROR'
  /** Plain HTTP (or another scheme) to a host not listed as insecure, or a private address refused. */
  | 'INSECURE_REFUSED'
  /** TLS did not work: plain HTTP answered, a certificate from an untrusted CA, expired, another name. */
  | 'TLS_FAILED'
  /** A status the protocol does not allow here (400, 405, ...). */
  | 'UNEXPECTED_STATUS'
  /** The caller passed something invalid (a malformed digest or tag): a bug, not the registry. */
  | 'INVALID_REQUEST';

/** Where an error happened: the registry host and, when known, the repository. */
export interface RegistryErrorContext {
  readonly registry: string;
  readonly repository?: string | undefined;
  /** The HTTP status that led to the error, when there was one. */
  readonly status?: number | undefined;
}

/** `ErrorOptions`, and whether the message already says in words what the cause says. */
export interface RegistryErrorOptions extends ErrorOptions {
  /** The message explains the cause (OpenSSL's text, a socket code): describe it once. */
  readonly causeInMessage?: boolean;
}

/**
 * Any failure of the registry layer. `causeInMessage` is `@signet/core`'s `CauseInMessage` (this
 * package does not depend on core): `describeCause` then does not repeat the cause.
 */
export class RegistryError extends Error {
  override readonly name = 'RegistryError';
  readonly code: RegistryErrorCode;
  readonly registry: string;
  readonly repository: string | undefined;
  readonly status: number | undefined;
  /** The problem without the location prefix. */
  readonly problem: string;
  readonly causeInMessage: boolean;

  constructor(
    code: RegistryErrorCode,
    context: RegistryErrorContext,
    problem: string,
    options?: RegistryErrorOptions,
  ) {
    super(`${describeLocation(context)}: ${problem}`, options);
    this.causeInMessage = options?.causeInMessage === true;
    this.code = code;
    this.registry = context.registry;
    this.repository = context.repository;
    this.status = context.status;
    this.problem = problem;
  }
}

function describeLocation(context: RegistryErrorContext): string {
  return context.repository === undefined
    ? `registry ${context.registry}`
    : `registry ${context.registry} repository ${context.repository}`;
}

/**
 * True when `error` means "the image could not be checked" (registry unreachable, timeout,
 * refused credentials, malformed or tampered data): the admission contract's `infrastructure`
 * failure, as opposed to a `policy` failure. Caller bugs (`INVALID_REQUEST`) and errors from
 * outside the registry layer are not.
 */
export function isInfrastructureFailure(error: unknown): error is RegistryError {
  return error instanceof RegistryError && error.code !== 'INVALID_REQUEST';
}

/** A URL for a message: no user info, no query (which may carry tokens), no fragment. */
export function displayUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}
