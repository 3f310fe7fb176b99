// The checks Signet adds to log entries: who the entry says signed (every Rekor body kind), and
// `intoto` 0.0.1 SETs.
import { createHash, sign } from 'node:crypto';
import type { TransparencyLogEntry } from '@sigstore/bundle';
import { json } from '@sigstore/core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  checkLoggedSigner,
  type SignerMaterial,
  spkiOfCertificate,
  verifyIntotoV001,
} from '../../src/sigstore/log-entries.js';
import {
  type CertifiedKey,
  certify,
  ecKeyPair,
  type Infra,
  makeInfra,
  publicPem as pemOf,
} from '../support/fixtures.js';

let infra: Infra;
let signer: CertifiedKey;
beforeAll(async () => {
  infra = await makeInfra();
  signer = await certify(infra.ca);
});

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');

function entry(kind: string, version: string, body: unknown): TransparencyLogEntry {
  return {
    logIndex: '7',
    logId: { keyId: Buffer.alloc(32) },
    kindVersion: { kind, version },
    integratedTime: '1',
    inclusionPromise: undefined,
    inclusionProof: undefined,
    canonicalizedBody: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
  };
}

const keyed = (): SignerMaterial => ({ spki: spkiOfCertificate(signer.certificate), certificate: undefined });
const keyless = (): SignerMaterial => ({
  spki: spkiOfCertificate(signer.certificate),
  certificate: signer.certificate,
});
const code = (run: () => void) => {
  try {
    run();
  } catch (error) {
    return (error as { code: string }).code;
  }
  return 'none';
};

describe('the signer a log entry names', () => {
  it('is read from every v1 body kind, as key or certificate', () => {
    const cert = b64(signer.certificatePem);
    const key = b64(pemOf(signer.publicKey));
    const bodies: [string, string, unknown][] = [
      ['hashedrekord', '0.0.1', { spec: { signature: { publicKey: { content: cert } } } }],
      ['dsse', '0.0.1', { spec: { signatures: [{ verifier: key }] } }],
      ['intoto', '0.0.1', { spec: { publicKey: cert } }],
      ['intoto', '0.0.2', { spec: { content: { envelope: { signatures: [{ publicKey: key }] } } } }],
    ];
    for (const [kind, version, body] of bodies) {
      expect(code(() => checkLoggedSigner(entry(kind, version, body), keyless()))).toBe('none');
      expect(code(() => checkLoggedSigner(entry(kind, version, body), keyed()))).toBe('none');
    }
  });

  it('is read from Rekor v2 bodies (DER verifiers)', () => {
    const certVerifier = { x509Certificate: { rawBytes: b64(signer.certificate) } };
    const keyVerifier = {
      publicKey: { rawBytes: b64(signer.publicKey.export({ format: 'der', type: 'spki' })) },
    };
    const hashed = (verifier: unknown) => ({
      kind: 'hashedrekord',
      apiVersion: '0.0.2',
      spec: { hashedRekordV002: { signature: { content: 'AA==', verifier } } },
    });
    const dsse = (...verifiers: unknown[]) => ({
      kind: 'dsse',
      apiVersion: '0.0.2',
      spec: { dsseV002: { signatures: verifiers.map((verifier) => ({ content: 'AA==', verifier })) } },
    });
    expect(
      code(() => checkLoggedSigner(entry('hashedrekord', '0.0.2', hashed(certVerifier)), keyless())),
    ).toBe('none');
    expect(code(() => checkLoggedSigner(entry('dsse', '0.0.2', dsse(keyVerifier)), keyless()))).toBe('none');
    expect(
      code(() => checkLoggedSigner(entry('dsse', '0.0.2', dsse(keyVerifier, keyVerifier)), keyless())),
    ).toBe('TLOG_ERROR');
    expect(code(() => checkLoggedSigner(entry('hashedrekord', '0.0.2', hashed({})), keyless()))).toBe(
      'TLOG_ERROR',
    );
    expect(code(() => checkLoggedSigner(entry('hashedrekord', '0.0.2', { spec: {} }), keyless()))).toBe(
      'TLOG_ERROR',
    );
  });

  it('must be the signer: another key, or another certificate for the same key, does not count', async () => {
    const otherKey = { spec: { signature: { publicKey: { content: b64(pemOf(ecKeyPair().publicKey)) } } } };
    expect(code(() => checkLoggedSigner(entry('hashedrekord', '0.0.1', otherKey), keyless()))).toBe(
      'TLOG_SIGNER_MISMATCH',
    );
    const reissued = await certify(infra.ca, { key: signer });
    const otherCert = { spec: { signature: { publicKey: { content: b64(reissued.certificatePem) } } } };
    expect(() => checkLoggedSigner(entry('hashedrekord', '0.0.1', otherCert), keyless())).toThrow(
      "transparency-log entry 7 names another certificate than the signer's",
    );
    expect(code(() => checkLoggedSigner(entry('hashedrekord', '0.0.1', otherCert), keyed()))).toBe('none');
  });

  it('is an error when the body cannot tell', () => {
    const cases: [string, string, unknown][] = [
      ['rekord', '0.0.1', { spec: {} }],
      ['hashedrekord', '0.0.1', { spec: {} }],
      ['dsse', '0.0.1', { spec: { signatures: [{}, {}] } }],
      ['dsse', '0.0.1', {}],
    ];
    for (const [kind, version, body] of cases) {
      expect(() => checkLoggedSigner(entry(kind, version, body), keyless())).toThrow(
        `a ${kind} ${version} log entry names no signer Signet can compare`,
      );
    }
    expect(() => checkLoggedSigner(entry('dsse', '0.0.1', '{'), keyless())).toThrow(
      'cannot read the signer of a dsse 0.0.1 log entry',
    );
    expect(
      code(() =>
        checkLoggedSigner(
          entry('hashedrekord', '0.0.1', { spec: { signature: { publicKey: { content: '%' } } } }),
          keyless(),
        ),
      ),
    ).toBe('TLOG_ERROR');
  });
});

describe('intoto 0.0.1 entries', () => {
  function signedEntry(body: string, integratedTime = Math.floor(Date.now() / 1000)): TransparencyLogEntry {
    const keyId = createHash('sha256').update(infra.tlog.publicKey).digest();
    const canonicalizedBody = Buffer.from(body);
    const payload = json.canonicalize({
      body: canonicalizedBody.toString('base64'),
      integratedTime,
      logIndex: 3,
      logID: keyId.toString('hex'),
    });
    return {
      logIndex: '3',
      logId: { keyId },
      kindVersion: { kind: 'intoto', version: '0.0.1' },
      integratedTime: String(integratedTime),
      inclusionPromise: {
        signedEntryTimestamp: sign('sha256', Buffer.from(payload), infra.keys.tlog.privateKey),
      },
      inclusionProof: undefined,
      canonicalizedBody,
    };
  }

  it('refuse a body that is not JSON, even with a valid SET', () => {
    const tlogs = infra.trustRoot.material.tlogs;
    expect(() =>
      verifyIntotoV001(
        signedEntry('not json'),
        { payload: Buffer.from('p'), envelope: undefined },
        keyless(),
        tlogs,
      ),
    ).toThrow('intoto 0.0.1 log entry body is not JSON');
  });

  it('refuse a SET at a time the log key is not valid for', () => {
    const payload = Buffer.from('p');
    const body = JSON.stringify({
      spec: {
        content: {
          payloadHash: { algorithm: 'sha256', value: createHash('sha256').update(payload).digest('hex') },
        },
        publicKey: b64(signer.certificatePem),
      },
    });
    const tlogs = infra.trustRoot.material.tlogs;
    expect(
      verifyIntotoV001(signedEntry(body, 1000), { payload, envelope: undefined }, keyless(), tlogs),
    ).toEqual(new Date(1_000_000));
    const expired = tlogs.map((log) => ({ ...log, validFor: { start: new Date(0), end: new Date(10) } }));
    expect(() =>
      verifyIntotoV001(signedEntry(body, 1000), { payload, envelope: undefined }, keyless(), expired),
    ).toThrow('signed entry timestamp does not verify');
    const md5 = body.replace('"sha256"', '"md5"');
    expect(() =>
      verifyIntotoV001(signedEntry(md5), { payload, envelope: undefined }, keyless(), tlogs),
    ).toThrow('intoto 0.0.1 log entry is for another envelope');
  });
});
