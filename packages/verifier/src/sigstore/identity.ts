// Who a Fulcio-style certificate was issued to, and whether that satisfies a policy identity.
// sigstore-js matches the subject with an unanchored regular expression (a policy for
// `https://github.com/acme/app` accepts `https://github.com/acme/app-evil`), so Signet compares
// identities itself: exact strings exactly, regular expressions against the whole string.
// Policies are written for Go's regexp package (RE2), so patterns are compiled by re2js: the same
// syntax (`(?P<name>...)`, `\A`, `\z`, no lookaround or backreferences), linear-time matching, and
// a whole-string match that flags such as `(?m)` cannot turn into a line match.
import type { Identity } from '@signet/k8s-types';
import type { X509Certificate } from '@sigstore/core';
import { RE2JS, type RE2JSException } from 're2js';

const OID_SUBJECT_ALT_NAME = '2.5.29.17';
/** Fulcio's original issuer extension: the raw issuer URL as the extension value. */
const OID_FULCIO_ISSUER_V1 = '1.3.6.1.4.1.57264.1.1';
/** Fulcio's issuer extension since 2022: a DER UTF8String. */
const OID_FULCIO_ISSUER_V2 = '1.3.6.1.4.1.57264.1.8';
/** otherName SAN Fulcio uses for username identities. */
const OID_OTHERNAME_USERNAME = '1.3.6.1.4.1.57264.1.7';

const SAN_OTHER_NAME = 0;
const SAN_RFC822_NAME = 1;
const SAN_DNS_NAME = 2;
const SAN_URI = 6;

/** The identity claims of a certificate. */
export interface CertificateIdentity {
  /** The OIDC issuer from Fulcio's extension (v2 preferred, as cosign does), when present. */
  readonly issuer: string | undefined;
  /** Email, URI, DNS and Fulcio username subject alternative names, in certificate order. */
  readonly subjects: readonly string[];
}

export function certificateIdentity(cert: X509Certificate): CertificateIdentity {
  return { issuer: issuerOf(cert), subjects: subjectsOf(cert) };
}

function issuerOf(cert: X509Certificate): string | undefined {
  const v2 = cert.extension(OID_FULCIO_ISSUER_V2);
  if (v2 !== undefined) return v2.valueObj.subs[0]?.value.toString('utf8');
  return cert.extension(OID_FULCIO_ISSUER_V1)?.value.toString('utf8');
}

function subjectsOf(cert: X509Certificate): string[] {
  const names = cert.extension(OID_SUBJECT_ALT_NAME)?.valueObj.subs[0]?.subs ?? [];
  const subjects: string[] = [];
  for (const name of names) {
    const tag = name.tag;
    if (
      tag.isContextSpecific(SAN_RFC822_NAME) ||
      tag.isContextSpecific(SAN_DNS_NAME) ||
      tag.isContextSpecific(SAN_URI)
    ) {
      subjects.push(name.value.toString('utf8'));
    } else if (tag.isContextSpecific(SAN_OTHER_NAME) && name.subs[0]?.toOID() === OID_OTHERNAME_USERNAME) {
      const value = name.subs[1]?.subs[0]?.value;
      if (value !== undefined) subjects.push(value.toString('utf8'));
    }
  }
  return subjects;
}

/** One `keyless.identities[]` entry, ready to match. */
export interface CompiledIdentity {
  /** For messages: `issuer "https://..." subject ~ /^(?:...)$/`. */
  readonly description: string;
  readonly issuer: (value: string) => boolean;
  readonly subject: (value: string) => boolean;
}

/**
 * Compiles an identity. Regular expressions use Go's RE2 syntax and must match the whole value
 * (as if written `\A(?:...)\z`). Throws {@link IdentityPatternError} for an invalid expression
 * and `Error` when issuer or subject is missing.
 */
export function compileIdentity(identity: Identity): CompiledIdentity {
  const issuer = matcher('issuer', identity.issuer, identity.issuerRegExp);
  const subject = matcher('subject', identity.subject, identity.subjectRegExp);
  return {
    description: `${issuer.description} ${subject.description}`,
    issuer: issuer.test,
    subject: subject.test,
  };
}

interface Matcher {
  readonly description: string;
  readonly test: (value: string) => boolean;
}

function matcher(field: string, exact: string | undefined, pattern: string | undefined): Matcher {
  if (exact !== undefined && exact !== '') {
    return { description: `${field} ${JSON.stringify(exact)}`, test: (value) => value === exact };
  }
  if (pattern !== undefined && pattern !== '') {
    const test = wholeMatch(pattern);
    return { description: `${field} ~ ${JSON.stringify(pattern)} (RE2, whole value)`, test };
  }
  throw new Error(`identity has neither ${field} nor ${field}RegExp`);
}

/** An identity regular expression that is not valid RE2 (Go `regexp`) syntax. */
export class IdentityPatternError extends SyntaxError {
  override readonly name = 'IdentityPatternError';
}

/**
 * A predicate that is true when `pattern` (RE2 syntax) matches all of a value. The anchoring is
 * the matcher's, not text added around the pattern, so no flag inside the pattern can weaken it.
 */
export function wholeMatch(pattern: string): (value: string) => boolean {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (error) {
    // re2js throws only its own exceptions (RE2JSSyntaxException and kin) for a bad pattern.
    const reason = (error as RE2JSException).message;
    throw new IdentityPatternError(`invalid regular expression ${JSON.stringify(pattern)}: ${reason}`, {
      cause: error,
    });
  }
  return (value) => compiled.matches(value);
}

/** The identity a certificate matched: its issuer and the first subject that matched. */
export interface MatchedIdentity {
  readonly issuer: string;
  readonly subject: string;
}

/** The first identity the certificate satisfies, or `undefined`. */
export function matchIdentity(
  identities: readonly CompiledIdentity[],
  claims: CertificateIdentity,
): MatchedIdentity | undefined {
  const issuer = claims.issuer;
  if (issuer === undefined) return undefined;
  for (const identity of identities) {
    if (!identity.issuer(issuer)) continue;
    const subject = claims.subjects.find((value) => identity.subject(value));
    if (subject !== undefined) return { issuer, subject };
  }
  return undefined;
}
