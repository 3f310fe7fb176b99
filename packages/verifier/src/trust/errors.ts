/** What went wrong with a trust root. Callers branch on the code, never on the message. */
export type TrustRootErrorCode =
  /** The trust root's content is malformed (bad JSON, base64, PEM, certificate or key). */
  | 'TRUST_ROOT_INVALID'
  /** The trust root could not be fetched or verified (TUF mirror unreachable, timeout, bad metadata). */
  | 'TRUST_ROOT_UNAVAILABLE'
  /** The trust root uses a form Signet does not support yet. */
  | 'TRUST_ROOT_UNSUPPORTED'
  /** A `trustRootRef` names no TrustRoot. */
  | 'TRUST_ROOT_NOT_FOUND'
  /** Loaded offline: a `remote` TrustRoot checked for form only, its mirror never contacted. */
  | 'TRUST_ROOT_NOT_FETCHED';

export class TrustRootError extends Error {
  override readonly name = 'TrustRootError';
  readonly code: TrustRootErrorCode;
  /** The TrustRoot's name (`public-good` for the embedded Sigstore root). */
  readonly trustRoot: string;

  constructor(code: TrustRootErrorCode, trustRoot: string, problem: string, options?: ErrorOptions) {
    super(`TrustRoot ${JSON.stringify(trustRoot)}: ${problem}`, options);
    this.code = code;
    this.trustRoot = trustRoot;
  }
}
