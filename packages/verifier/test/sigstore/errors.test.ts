import { PolicyError, VerificationError } from '@sigstore/verify';
import { describe, expect, it } from 'vitest';
import { kindOf, parsing, SignatureCheckError } from '../../src/sigstore/errors.js';
import { fromSigstoreError } from '../../src/sigstore/verify.js';

describe('sigstore-js errors', () => {
  it('map to Signet codes and keep the original as cause', () => {
    const cases: [unknown, string, string][] = [
      [
        new VerificationError({ code: 'SIGNATURE_ERROR', message: 'x' }),
        'SIGNATURE_MISMATCH',
        'signature does not verify',
      ],
      [
        new VerificationError({ code: 'PUBLIC_KEY_ERROR', message: 'x' }),
        'SIGNATURE_MISMATCH',
        'public key not usable',
      ],
      [
        new VerificationError({ code: 'TIMESTAMP_ERROR', message: 'x' }),
        'TIMESTAMP_ERROR',
        'timestamp does not verify',
      ],
      [
        new VerificationError({ code: 'TLOG_MISSING_INCLUSION_ERROR', message: 'x' }),
        'TLOG_ERROR',
        'transparency-log entry does not verify',
      ],
      [
        new PolicyError({ code: 'UNTRUSTED_SIGNER_ERROR', message: 'x' }),
        'IDENTITY_MISMATCH',
        'signer identity',
      ],
      [
        new VerificationError({ code: 'CERTIFICATE_ERROR', message: 'x' }),
        'CERTIFICATE_ERROR',
        'certificate not trusted',
      ],
      [
        new VerificationError({ code: 'NOT_IMPLEMENTED_ERROR', message: 'x' }),
        'VERIFIER_ERROR',
        'unexpected error while verifying',
      ],
      [
        new TypeError("Cannot read properties of undefined (reading 'extensions')"),
        'VERIFIER_ERROR',
        'unexpected error while verifying',
      ],
      ['a string', 'VERIFIER_ERROR', 'unexpected error while verifying'],
    ];
    for (const [error, code, message] of cases) {
      expect(fromSigstoreError(error)).toMatchObject({ code, message, cause: error });
    }
    expect(
      fromSigstoreError(new VerificationError({ code: 'CERTIFICATE_ERROR', message: 'x' }), 1).message,
    ).toBe(
      'certificate not trusted (intermediate certificates come from the trust root, never from the signature)',
    );
  });

  it('class unverifiable input as infrastructure, everything else as policy', () => {
    expect(kindOf('MALFORMED_ARTIFACT')).toBe('infrastructure');
    expect(kindOf('TRUST_ROOT_UNAVAILABLE')).toBe('infrastructure');
    expect(kindOf('SIGNATURE_MISMATCH')).toBe('policy');
    expect(new SignatureCheckError('BINDING_MISMATCH', 'm')).toMatchObject({
      name: 'SignatureCheckError',
      kind: 'policy',
    });
  });

  it('wrap parse errors but pass Signet errors through', () => {
    const own = new SignatureCheckError('UNSUPPORTED_ARTIFACT', 'no');
    expect(() =>
      parsing('x', () => {
        throw own;
      }),
    ).toThrow(own);
    expect(() => parsing('the thing', () => JSON.parse('{'))).toThrow(
      expect.objectContaining({
        code: 'MALFORMED_ARTIFACT',
        message: 'cannot parse the thing',
        cause: expect.any(SyntaxError),
      }),
    );
  });
});
