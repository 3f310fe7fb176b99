import { describe, expect, it } from 'vitest';
import {
  checkSimpleSigningBinding,
  checkStatementBinding,
  readStatement,
} from '../../src/sigstore/payload.js';
import { DIGEST, OTHER_DIGEST, simpleSigningPayload, statement } from '../support/fixtures.js';

const IN_TOTO = 'application/vnd.in-toto+json';
const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const code = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return 'none';
};

describe('simple-signing payloads', () => {
  it('bind to the digest they name', () => {
    expect(() => checkSimpleSigningBinding(simpleSigningPayload(), DIGEST)).not.toThrow();
    expect(code(() => checkSimpleSigningBinding(simpleSigningPayload(OTHER_DIGEST), DIGEST))).toBe(
      'BINDING_MISMATCH',
    );
  });

  it('are malformed without JSON or a digest', () => {
    expect(code(() => checkSimpleSigningBinding(Buffer.from('{'), DIGEST))).toBe('MALFORMED_ARTIFACT');
    expect(code(() => checkSimpleSigningBinding(json({ critical: { image: {} } }), DIGEST))).toBe(
      'MALFORMED_ARTIFACT',
    );
    const long = `sha256:${'f'.repeat(200)}`;
    expect(() => checkSimpleSigningBinding(simpleSigningPayload(long), DIGEST)).toThrow(
      `signature is for "sha256:${'f'.repeat(93)}...", not ${DIGEST}`,
    );
  });
});

describe('in-toto statements', () => {
  it('parse v0.1 and v1 statements, with a null predicate when absent', () => {
    const v1 = readStatement(
      IN_TOTO,
      json({
        _type: 'https://in-toto.io/Statement/v1',
        predicateType: 'p',
        subject: [{ digest: { sha256: 'AB', md5: 1 } }],
      }),
    );
    expect(v1).toMatchObject({
      predicateType: 'p',
      predicate: null,
      subject: [{ name: undefined, digest: { sha256: 'AB' } }],
    });
    expect(readStatement(IN_TOTO, statement('p', { a: 1 })).subject[0]?.name).toBe(
      'registry.example/acme/app',
    );
  });

  it('refuse other payload types and malformed statements', () => {
    expect(code(() => readStatement('text/plain', statement('p', {})))).toBe('UNSUPPORTED_ARTIFACT');
    expect(code(() => readStatement('', statement('p', {})))).toBe('UNSUPPORTED_ARTIFACT');
    expect(code(() => readStatement(IN_TOTO, Buffer.from('[')))).toBe('MALFORMED_ARTIFACT');
    expect(code(() => readStatement(IN_TOTO, json([])))).toBe('MALFORMED_ARTIFACT');
    expect(code(() => readStatement(IN_TOTO, json({ _type: 'x' })))).toBe('MALFORMED_ARTIFACT');
    expect(
      code(() => readStatement(IN_TOTO, json({ _type: 'https://in-toto.io/Statement/v1', subject: [] }))),
    ).toBe('MALFORMED_ARTIFACT');
    expect(
      code(() =>
        readStatement(
          IN_TOTO,
          json({ _type: 'https://in-toto.io/Statement/v1', predicateType: 'p', subject: [{ name: 'x' }] }),
        ),
      ),
    ).toBe('MALFORMED_ARTIFACT');
  });

  it('bind to a subject with the digest, case-insensitively in hex', () => {
    const upper = readStatement(
      IN_TOTO,
      json({
        _type: 'https://in-toto.io/Statement/v1',
        predicateType: 'p',
        subject: [{ digest: { sha256: DIGEST.slice(7).toUpperCase() } }],
      }),
    );
    expect(() => checkStatementBinding(upper, DIGEST)).not.toThrow();
    const none = readStatement(
      IN_TOTO,
      json({ _type: 'https://in-toto.io/Statement/v1', predicateType: 'p', subject: [] }),
    );
    expect(() => checkStatementBinding(none, DIGEST)).toThrow(
      `statement subjects (none) do not include ${DIGEST}`,
    );
    const sha512 = readStatement(
      IN_TOTO,
      json({
        _type: 'https://in-toto.io/Statement/v1',
        predicateType: 'p',
        subject: [{ digest: { sha512: 'aa' } }],
      }),
    );
    expect(code(() => checkStatementBinding(sha512, DIGEST))).toBe('BINDING_MISMATCH');
    expect(() => checkStatementBinding(sha512, 'sha512:AA')).not.toThrow();
  });
});
