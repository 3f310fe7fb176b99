// What a signature vouches for, and whether that is the admitted image. A valid signature over a
// payload about another digest (of the same repository, say) is a replay, not a signature of
// this image: the binding is checked for every signature and attestation.
import { SignatureCheckError } from './errors.js';

export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';
/** The predicate type current cosign signs images with, inside a DSSE bundle. */
export const COSIGN_SIGN_PREDICATE_TYPE = 'https://sigstore.dev/cosign/sign/v1';
const STATEMENT_TYPES: ReadonlySet<string> = new Set([
  'https://in-toto.io/Statement/v0.1',
  'https://in-toto.io/Statement/v1',
]);

/** An in-toto Statement (v0.1 or v1). */
export interface InTotoStatement {
  readonly subject: readonly StatementSubject[];
  readonly predicateType: string;
  /** The predicate as parsed JSON; `null` when absent. */
  readonly predicate: unknown;
  /** The whole statement as parsed JSON. */
  readonly json: Readonly<Record<string, unknown>>;
}

export interface StatementSubject {
  readonly name: string | undefined;
  readonly digest: Readonly<Record<string, string>>;
}

/** Checks that a cosign simple-signing payload names `digest`. Throws {@link SignatureCheckError}. */
export function checkSimpleSigningBinding(payload: Buffer, digest: string): void {
  let signed: unknown;
  try {
    const json = JSON.parse(payload.toString('utf8')) as { critical?: { image?: Record<string, unknown> } };
    signed = json.critical?.image?.['docker-manifest-digest'];
  } catch (error) {
    throw new SignatureCheckError('MALFORMED_ARTIFACT', 'the simple-signing payload is not JSON', {
      cause: error,
    });
  }
  if (typeof signed !== 'string') {
    throw new SignatureCheckError(
      'MALFORMED_ARTIFACT',
      'the simple-signing payload has no critical.image.docker-manifest-digest',
    );
  }
  if (signed !== digest) {
    throw new SignatureCheckError(
      'BINDING_MISMATCH',
      `signature is for ${quoteShort(signed)}, not ${digest}`,
    );
  }
}

/** Parses the in-toto Statement of a DSSE payload. Throws {@link SignatureCheckError}. */
export function readStatement(payloadType: string, payload: Buffer): InTotoStatement {
  if (payloadType !== IN_TOTO_PAYLOAD_TYPE) {
    throw new SignatureCheckError(
      'UNSUPPORTED_ARTIFACT',
      `DSSE payload type ${quoteShort(payloadType)} is not ${IN_TOTO_PAYLOAD_TYPE}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(payload.toString('utf8'));
  } catch (error) {
    throw new SignatureCheckError('MALFORMED_ARTIFACT', 'the in-toto statement is not JSON', {
      cause: error,
    });
  }
  const statement = asRecord(json);
  if (
    statement === undefined ||
    typeof statement._type !== 'string' ||
    !STATEMENT_TYPES.has(statement._type)
  ) {
    throw new SignatureCheckError('MALFORMED_ARTIFACT', 'the DSSE payload is not an in-toto Statement');
  }
  if (typeof statement.predicateType !== 'string' || !Array.isArray(statement.subject)) {
    throw new SignatureCheckError(
      'MALFORMED_ARTIFACT',
      'the in-toto statement has no predicateType or subject list',
    );
  }
  return {
    subject: statement.subject.map(readSubject),
    predicateType: statement.predicateType,
    predicate: statement.predicate ?? null,
    json: statement,
  };
}

function readSubject(value: unknown): StatementSubject {
  const subject = asRecord(value);
  const digest = asRecord(subject?.digest);
  if (subject === undefined || digest === undefined) {
    throw new SignatureCheckError('MALFORMED_ARTIFACT', 'an in-toto subject has no digest map');
  }
  const digests: Record<string, string> = {};
  for (const [algorithm, hex] of Object.entries(digest)) {
    if (typeof hex === 'string') digests[algorithm] = hex;
  }
  return { name: typeof subject.name === 'string' ? subject.name : undefined, digest: digests };
}

/** Checks that one subject of the statement has the admitted `algorithm:hex` digest. */
export function checkStatementBinding(statement: InTotoStatement, digest: string): void {
  const colon = digest.indexOf(':');
  const algorithm = digest.slice(0, colon);
  const hex = digest.slice(colon + 1).toLowerCase();
  if (statement.subject.some((subject) => subject.digest[algorithm]?.toLowerCase() === hex)) return;
  const named = statement.subject.map((subject) =>
    Object.entries(subject.digest).map(([a, h]) => `${a}:${h}`),
  );
  const list = named.flat().slice(0, 3).map(quoteShort).join(', ');
  throw new SignatureCheckError(
    'BINDING_MISMATCH',
    `statement subjects (${list === '' ? 'none' : list}) do not include ${digest}`,
  );
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function quoteShort(value: string): string {
  return JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}...` : value);
}
