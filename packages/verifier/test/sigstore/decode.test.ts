// Malformed and unusual artifacts: every one is refused with a code and a cause, never verified.
import { describe, expect, it } from 'vitest';
import { decodeArtifact } from '../../src/sigstore/decode.js';
import { toPem } from '../../src/sigstore/pem.js';
import { certificate } from '../support/der.js';
import {
  dsseEnvelope,
  ecKeyPair,
  legacyAttestation,
  legacySignature,
  publicPem,
  REPO,
  simpleSigningPayload,
} from '../support/fixtures.js';

const payload = simpleSigningPayload();
const CERT = toPem(certificate({}), 'CERTIFICATE');
const set = (overrides: Record<string, unknown> = {}, payloadOverrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    SignedEntryTimestamp: 'AAAA',
    Payload: {
      body: Buffer.from('{"kind":"hashedrekord","apiVersion":"0.0.1"}').toString('base64'),
      integratedTime: 1,
      logIndex: 2,
      logID: 'ab'.repeat(32),
      ...payloadOverrides,
    },
    ...overrides,
  });

function failure(run: () => unknown): { code: string; message: string; cause?: unknown } {
  try {
    run();
  } catch (error) {
    return error as { code: string; message: string; cause?: unknown };
  }
  throw new Error('expected a failure');
}

describe('legacy signature layers', () => {
  it('become a message-signature bundle with the SET as inclusion promise', () => {
    const decoded = decodeArtifact(
      legacySignature(payload, Buffer.from('sig'), {
        certificatePem: CERT,
        chainPem: CERT + CERT,
        set: set(),
      }),
    );
    expect(decoded).toMatchObject({ format: 'legacy-signature', payloadType: '', extraCertificates: 2 });
    const [entry] = decoded.bundle.verificationMaterial.tlogEntries;
    expect(entry).toMatchObject({
      logIndex: '2',
      integratedTime: '1',
      kindVersion: { kind: 'hashedrekord', version: '0.0.1' },
      inclusionProof: undefined,
    });
    expect(entry?.logId.keyId.toString('hex')).toBe('ab'.repeat(32));
  });

  it('treat an empty certificate annotation as a key signature', () => {
    const decoded = decodeArtifact(
      legacySignature(payload, Buffer.from('sig'), { certificatePem: '', chainPem: '' }),
    );
    expect(decoded.bundle.verificationMaterial.content.$case).toBe('publicKey');
    expect(decoded.extraCertificates).toBe(0);
  });

  it('are refused when an annotation is missing or malformed', () => {
    const cases: [Record<string, string | undefined>, string][] = [
      [
        { 'dev.cosignproject.cosign/signature': undefined },
        'signature layer has no dev.cosignproject.cosign/signature annotation',
      ],
      [
        { 'dev.cosignproject.cosign/signature': '***' },
        'cannot parse the dev.cosignproject.cosign/signature annotation',
      ],
      [
        { 'dev.sigstore.cosign/certificate': CERT + CERT },
        'the dev.sigstore.cosign/certificate annotation holds 2 certificates, expected 1',
      ],
      [
        { 'dev.sigstore.cosign/certificate': publicPem(ecKeyPair()) },
        'cannot parse the dev.sigstore.cosign/certificate annotation',
      ],
      [
        { 'dev.sigstore.cosign/certificate': CERT, 'dev.sigstore.cosign/chain': 'x' },
        'cannot parse the dev.sigstore.cosign/chain annotation',
      ],
      [{ 'dev.sigstore.cosign/bundle': '[]' }, 'cannot parse the dev.sigstore.cosign/bundle annotation'],
      [
        { 'dev.sigstore.cosign/bundle': set({}, { logID: 'xyz' }) },
        'cannot parse the dev.sigstore.cosign/bundle annotation',
      ],
      [
        { 'dev.sigstore.cosign/bundle': set({}, { logIndex: -1 }) },
        'cannot parse the dev.sigstore.cosign/bundle annotation',
      ],
      [
        { 'dev.sigstore.cosign/bundle': set({ SignedEntryTimestamp: 5 }) },
        'cannot parse the dev.sigstore.cosign/bundle annotation',
      ],
      [
        { 'dev.sigstore.cosign/rfc3161timestamp': '{"SignedRFC3161Timestamp":"AAAA"}' },
        'cannot parse the dev.sigstore.cosign/rfc3161timestamp annotation',
      ],
    ];
    for (const [annotations, message] of cases) {
      const error = failure(() =>
        decodeArtifact(legacySignature(payload, Buffer.from('sig'), { annotations })),
      );
      expect(error).toMatchObject({ code: 'MALFORMED_ARTIFACT', message });
    }
    const logID = failure(() =>
      decodeArtifact(legacySignature(payload, Buffer.from('sig'), { set: set({}, { logID: 'xyz' }) })),
    );
    expect(logID.cause).toMatchObject({ message: 'Payload.logID must be 64 hexadecimal characters' });
  });
});

describe('legacy attestation layers', () => {
  it("keep the layer's signature annotation (cosign's empty one, or a malformed one as empty) and the blob digest", () => {
    const parsed = {
      payloadType: 'application/vnd.in-toto+json',
      payload: 'e30=',
      signatures: [{ sig: 'c2ln' }],
    };
    const decoded = decodeArtifact(legacyAttestation(envelope(parsed)));
    expect(decoded.layerSignature).toEqual(Buffer.alloc(0));
    expect(decoded.blobDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const odd = decodeArtifact(
      legacyAttestation(envelope(parsed), {
        annotations: { 'dev.cosignproject.cosign/signature': 'not base64!' },
      }),
    );
    expect(odd.layerSignature).toEqual(Buffer.alloc(0));
    const named = decodeArtifact(
      legacyAttestation(envelope(parsed), { annotations: { 'dev.cosignproject.cosign/signature': 'c2ln' } }),
    );
    expect(named.layerSignature.toString()).toBe('sig');
  });

  const key = ecKeyPair();
  const envelope = (value: unknown) => ({
    json: Buffer.from(JSON.stringify(value)),
    payload: Buffer.alloc(0),
    signature: Buffer.alloc(0),
  });

  it('keep the envelope, defaulting a missing keyid', () => {
    const { json } = dsseEnvelope(key, Buffer.from('{}'));
    const parsed = JSON.parse(json.toString()) as { signatures: { keyid?: string }[] };
    delete parsed.signatures[0]?.keyid;
    const decoded = decodeArtifact(legacyAttestation(envelope(parsed)));
    expect(decoded).toMatchObject({
      format: 'legacy-attestation',
      payloadType: 'application/vnd.in-toto+json',
      artifact: undefined,
    });
  });

  it('refuse envelopes that are not one signature over a payload', () => {
    const { json } = dsseEnvelope(key, Buffer.from('{}'));
    const base = JSON.parse(json.toString()) as Record<string, unknown> & { signatures: unknown[] };
    expect(
      failure(() =>
        decodeArtifact(
          legacyAttestation(envelope({ ...base, signatures: [base.signatures[0], base.signatures[0]] })),
        ),
      ),
    ).toMatchObject({
      code: 'UNSUPPORTED_ARTIFACT',
      message: 'DSSE envelope with 2 signatures; exactly one is supported',
    });
    for (const broken of [
      { ...base, signatures: {} },
      { ...base, payload: '' },
      { ...base, payloadType: 1 },
      [],
      { ...base, signatures: [5] },
    ]) {
      expect(failure(() => decodeArtifact(legacyAttestation(envelope(broken))))).toMatchObject({
        code: 'MALFORMED_ARTIFACT',
        message: 'cannot parse the DSSE envelope',
      });
    }
    expect(
      failure(() => decodeArtifact({ ...legacyAttestation(envelope(base)), envelope: Buffer.from('{') }))
        .code,
    ).toBe('MALFORMED_ARTIFACT');
  });

  it('are attributed to their source', () => {
    const { json } = dsseEnvelope(key, Buffer.from('{}'));
    expect(
      decodeArtifact(legacyAttestation(envelope(JSON.parse(json.toString())), { source: `${REPO}:x.att` }))
        .source,
    ).toBe(`${REPO}:x.att`);
  });
});
