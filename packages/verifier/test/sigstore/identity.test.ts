import { fc, test } from '@fast-check/vitest';
import { X509Certificate } from '@sigstore/core';
import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import {
  certificateIdentity,
  compileIdentity,
  IdentityPatternError,
  matchIdentity,
  wholeMatch,
} from '../../src/sigstore/identity.js';
import { certificate, oid, san, tlv, utf8 } from '../support/der.js';

const ISSUER_V1 = '1.3.6.1.4.1.57264.1.1';
const ISSUER_V2 = '1.3.6.1.4.1.57264.1.8';
const USERNAME = '1.3.6.1.4.1.57264.1.7';
const parse = (der: Buffer) => X509Certificate.parse(Buffer.from(der));

describe('certificate identities', () => {
  it('read email, DNS, URI and Fulcio username names, skipping others', () => {
    const cert = certificate({
      sans: [
        san.email('dev@acme.example'),
        san.ip([10, 0, 0, 1]),
        san.dns('build.acme.example'),
        san.uri('https://acme.example/ci'),
        san.otherName(USERNAME, 'octocat'),
        san.otherName('1.2.3.4', 'other'),
      ],
      extensions: [{ oid: ISSUER_V2, value: utf8('https://accounts.example') }],
    });
    expect(certificateIdentity(parse(cert))).toEqual({
      issuer: 'https://accounts.example',
      subjects: ['dev@acme.example', 'build.acme.example', 'https://acme.example/ci', 'octocat'],
    });
  });

  it('prefer the v2 issuer extension over the raw v1 one, and read v1 alone', () => {
    const both = certificate({
      extensions: [
        { oid: ISSUER_V1, value: Buffer.from('https://old') },
        { oid: ISSUER_V2, value: utf8('https://new') },
      ],
    });
    expect(certificateIdentity(parse(both))).toEqual({ issuer: 'https://new', subjects: [] });
    const v1 = certificate({ extensions: [{ oid: ISSUER_V1, value: Buffer.from('https://old') }] });
    expect(certificateIdentity(parse(v1)).issuer).toBe('https://old');
  });

  it('match nothing without an issuer extension', () => {
    const claims = certificateIdentity(parse(certificate({ sans: [san.email('a@b')] })));
    expect(claims).toEqual({ issuer: undefined, subjects: ['a@b'] });
    expect(
      matchIdentity([compileIdentity({ issuerRegExp: '.*', subjectRegExp: '.*' })], claims),
    ).toBeUndefined();
  });

  it('skip a malformed otherName', () => {
    const broken = tlv(0xa0, oid(USERNAME));
    const claims = certificateIdentity(
      parse(
        certificate({ sans: [broken, san.email('x@y')], extensions: [{ oid: ISSUER_V2, value: utf8('i') }] }),
      ),
    );
    expect(claims.subjects).toEqual(['x@y']);
  });
});

describe('policy identities', () => {
  const claims = {
    issuer: 'https://token.actions.githubusercontent.com',
    subjects: ['https://github.com/acme/app-evil/x', 'ops@acme.example'],
  };

  it('compare exact values exactly and return the subject that matched', () => {
    const exact = compileIdentity({ issuer: claims.issuer, subject: 'ops@acme.example' });
    expect(matchIdentity([exact], claims)).toEqual({ issuer: claims.issuer, subject: 'ops@acme.example' });
    expect(
      matchIdentity([compileIdentity({ issuer: claims.issuer, subject: 'ops@acme' })], claims),
    ).toBeUndefined();
    expect(
      matchIdentity(
        [compileIdentity({ issuer: 'https://token.actions', subject: 'ops@acme.example' })],
        claims,
      ),
    ).toBeUndefined();
  });

  it('anchor regular expressions, and honour a leading Go flag group', () => {
    expect(
      matchIdentity([compileIdentity({ issuerRegExp: 'https://token', subjectRegExp: '.*' })], claims),
    ).toBeUndefined();
    expect(
      matchIdentity(
        [compileIdentity({ issuerRegExp: '.*', subjectRegExp: 'https://github.com/acme/app' })],
        claims,
      ),
    ).toBeUndefined();
    expect(
      matchIdentity(
        [compileIdentity({ issuerRegExp: '.*', subjectRegExp: '(?i)OPS@ACME\\.EXAMPLE' })],
        claims,
      )?.subject,
    ).toBe('ops@acme.example');
    expect(compileIdentity({ issuer: 'i', subjectRegExp: 'a|b' }).description).toBe(
      'issuer "i" subject ~ "a|b" (RE2, whole value)',
    );
    expect(wholeMatch('a|b')('ab')).toBe(false);
  });

  it('try every identity in order', () => {
    const identities = [
      compileIdentity({ issuer: 'other', subjectRegExp: '.*' }),
      compileIdentity({ issuer: claims.issuer, subjectRegExp: '.*@acme\\.example' }),
    ];
    expect(matchIdentity(identities, claims)?.subject).toBe('ops@acme.example');
  });

  it('refuse invalid or incomplete identities', () => {
    expect(() => compileIdentity({ issuer: 'i', subjectRegExp: '(' })).toThrow(IdentityPatternError);
    expect(() => compileIdentity({ issuer: 'i', subjectRegExp: '(' })).toThrow(SyntaxError);
    expect(() => compileIdentity({ issuer: 'i' })).toThrow('identity has neither subject nor subjectRegExp');
    expect(() => compileIdentity({ issuer: '', issuerRegExp: '', subject: 's' })).toThrow(
      'identity has neither issuer nor issuerRegExp',
    );
  });

  test.prop([fc.string(), fc.string({ minLength: 1 })])(
    'never match a literal pattern with extra text around it',
    (literal, extra) => {
      const matches = wholeMatch(RE2JS.quote(literal));
      expect(matches(literal)).toBe(true);
      expect(matches(`${literal}${extra}`)).toBe(false);
      expect(matches(`${extra}${literal}`)).toBe(false);
    },
  );
});

// Policies are written for Go's regexp (RE2); JavaScript's RegExp differs in ways that matter.
describe('identity patterns have Go RE2 semantics', () => {
  const matchesSubject = (subjectRegExp: string, subject: string) =>
    compileIdentity({ issuer: 'i', subjectRegExp }).subject(subject);

  it('keep matching the whole value under (?m): no line anchors smuggled in', () => {
    const pattern = '(?m)https://github\\.com/acme/.*';
    expect(matchesSubject(pattern, 'https://evil.example/x\nhttps://github.com/acme/app')).toBe(false);
    expect(matchesSubject(pattern, 'https://github.com/acme/app\nhttps://evil.example/x')).toBe(false);
    expect(matchesSubject(pattern, 'https://github.com/acme/app')).toBe(true);
    expect(matchesSubject('(?s)acme/.*', 'acme/app\nmore')).toBe(true);
  });

  it('read \\A and \\z as text anchors, not letters', () => {
    expect(matchesSubject('\\Ahttps://github\\.com/acme/app\\z', 'https://github.com/acme/app')).toBe(true);
    expect(matchesSubject('\\Aacme\\z', 'Aacmez')).toBe(false);
  });

  it('accept named groups in both Go spellings', () => {
    expect(matchesSubject('https://github\\.com/(?P<org>[a-z]+)/app', 'https://github.com/acme/app')).toBe(
      true,
    );
    expect(matchesSubject('(?<org>[a-z]+)/app', 'acme/app')).toBe(true);
  });

  it('refuse what RE2 refuses (lookaround, backreferences)', () => {
    expect(() => matchesSubject('acme(?=/app)', 'acme')).toThrow(IdentityPatternError);
    expect(() => matchesSubject('(a)\\1', 'aa')).toThrow(IdentityPatternError);
  });

  it('match in linear time where a backtracking engine takes exponential time', () => {
    // With JavaScript's RegExp this one match takes about 10 s on the CI machine (it doubles per
    // added "a"); RE2 answers in microseconds. The bound is generous on purpose.
    const started = performance.now();
    expect(matchesSubject('(a+)+', `${'a'.repeat(27)}b`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
