// Legacy `.att` layers: DSSE envelopes holding in-toto statements, logged in Rekor as `intoto`
// 0.0.1 (cosign up to v2; sigstore-js rejects these, Signet verifies their SET itself) or `dsse`
// 0.0.1 (later cosign).
import { beforeAll, describe, expect, it } from 'vitest';
import { KEYLESS, keyCheck, keylessCheck, NOTHING, rejection, trustOf, verified } from '../support/checks.js';
import {
  type CertifiedKey,
  certify,
  DIGEST,
  dsseEnvelope,
  dsseV001Body,
  ecKeyPair,
  GITHUB_ISSUER,
  type Infra,
  intotoV001Body,
  legacyAttestation,
  logEntry,
  makeInfra,
  OTHER_DIGEST,
  publicPem,
  setAnnotation,
  statement,
  WORKFLOW,
} from '../support/fixtures.js';

const SLSA = 'https://slsa.dev/provenance/v0.2';
const IDENTITY = { issuer: GITHUB_ISSUER, subject: WORKFLOW };
const release = ecKeyPair();
const RELEASE = { name: 'release', pem: publicPem(release) };

let infra: Infra;
let signer: CertifiedKey;
beforeAll(async () => {
  infra = await makeInfra();
  signer = await certify(infra.ca);
});

const trust = () => trustOf(infra.trustRoot.material);

describe('keyed legacy attestations', () => {
  it('verify the DSSE signature and return the statement', () => {
    const envelope = dsseEnvelope(release, statement(SLSA, { builder: { id: 'ci' } }));
    const result = verified(legacyAttestation(envelope), keyCheck([RELEASE]));
    expect(result.statement).toMatchObject({ predicateType: SLSA, predicate: { builder: { id: 'ci' } } });
  });

  it('reject an envelope signed by another key', () => {
    const envelope = dsseEnvelope(ecKeyPair(), statement(SLSA, {}));
    expect(rejection(legacyAttestation(envelope), keyCheck([RELEASE])).code).toBe('SIGNATURE_MISMATCH');
  });

  it('reject a statement about another digest', () => {
    const envelope = dsseEnvelope(release, statement(SLSA, {}, OTHER_DIGEST));
    const error = rejection(legacyAttestation(envelope), keyCheck([RELEASE]));
    expect(error.code).toBe('BINDING_MISMATCH');
    expect(error.message).toBe(`statement subjects ("sha256:${'b'.repeat(64)}") do not include ${DIGEST}`);
  });

  it('reject a payload that is not an in-toto statement', () => {
    const envelope = dsseEnvelope(release, Buffer.from('{}'), 'text/plain');
    expect(rejection(legacyAttestation(envelope), keyCheck([RELEASE])).code).toBe('UNSUPPORTED_ARTIFACT');
  });

  it('verify an intoto 0.0.1 SET offline when the authority has ctlog', async () => {
    const envelope = dsseEnvelope(release, statement(SLSA, {}));
    const entry = await logEntry(
      infra.tlog,
      intotoV001Body(envelope.json, envelope.payload, publicPem(release)),
    );
    const check = keyCheck([RELEASE], { ...NOTHING, tlog: true }, trust());
    expect(verified(legacyAttestation(envelope, { set: setAnnotation(entry) }), check).signer.type).toBe(
      'key',
    );
  });

  it('verify entries Rekor wrote before payloadHash existed by the envelope hash', async () => {
    const envelope = dsseEnvelope(release, statement(SLSA, {}));
    const check = keyCheck([RELEASE], { ...NOTHING, tlog: true }, trust());
    const old = await logEntry(infra.tlog, intotoV001Body(envelope.json, undefined, publicPem(release)));
    expect(verified(legacyAttestation(envelope, { set: setAnnotation(old) }), check).signer.type).toBe('key');
    const other = dsseEnvelope(release, statement(SLSA, {}));
    const forOther = await logEntry(infra.tlog, intotoV001Body(other.json, undefined, publicPem(release)));
    expect(rejection(legacyAttestation(envelope, { set: setAnnotation(forOther) }), check).code).toBe(
      'TLOG_ERROR',
    );
  });

  it('reject an intoto 0.0.1 entry that names another key, another payload, or an unknown log', async () => {
    const envelope = dsseEnvelope(release, statement(SLSA, {}));
    const check = keyCheck([RELEASE], { ...NOTHING, tlog: true }, trust());
    const otherKey = await logEntry(
      infra.tlog,
      intotoV001Body(envelope.json, envelope.payload, publicPem(ecKeyPair())),
    );
    expect(rejection(legacyAttestation(envelope, { set: setAnnotation(otherKey) }), check).code).toBe(
      'TLOG_SIGNER_MISMATCH',
    );
    const other = dsseEnvelope(release, statement(SLSA, { x: 1 }));
    const otherPayload = await logEntry(
      infra.tlog,
      intotoV001Body(other.json, other.payload, publicPem(release)),
    );
    expect(rejection(legacyAttestation(envelope, { set: setAnnotation(otherPayload) }), check).message).toBe(
      'intoto 0.0.1 log entry is for another envelope',
    );
    const stranger = await makeInfra();
    const unknown = await logEntry(
      stranger.tlog,
      intotoV001Body(envelope.json, envelope.payload, publicPem(release)),
    );
    expect(rejection(legacyAttestation(envelope, { set: setAnnotation(unknown) }), check).message).toBe(
      'intoto 0.0.1 log entry: signed entry timestamp does not verify',
    );
  });
});

describe('keyless legacy attestations', () => {
  it('verify with an intoto 0.0.1 SET giving the time for the certificate', async () => {
    const envelope = dsseEnvelope(signer, statement(SLSA, {}));
    const entry = await logEntry(
      infra.tlog,
      intotoV001Body(envelope.json, envelope.payload, signer.certificatePem),
    );
    const artifact = legacyAttestation(envelope, {
      certificatePem: signer.certificatePem,
      set: setAnnotation(entry),
    });
    expect(verified(artifact, keylessCheck([IDENTITY], trust())).signer).toMatchObject({ subject: WORKFLOW });
  });

  it('verify with a dsse 0.0.1 SET (through sigstore-js)', async () => {
    const envelope = dsseEnvelope(signer, statement(SLSA, {}));
    const entry = await logEntry(
      infra.tlog,
      dsseV001Body(envelope.payload, envelope.signature, signer.certificatePem),
    );
    const artifact = legacyAttestation(envelope, {
      certificatePem: signer.certificatePem,
      set: setAnnotation(entry),
    });
    expect(verified(artifact, keylessCheck([IDENTITY], trust())).statement?.predicateType).toBe(SLSA);
  });

  it('reject a dsse entry naming another certificate', async () => {
    const envelope = dsseEnvelope(signer, statement(SLSA, {}));
    const other = await certify(infra.ca);
    const entry = await logEntry(
      infra.tlog,
      dsseV001Body(envelope.payload, envelope.signature, other.certificatePem),
    );
    const artifact = legacyAttestation(envelope, {
      certificatePem: signer.certificatePem,
      set: setAnnotation(entry),
    });
    expect(rejection(artifact, keylessCheck([IDENTITY], trust())).code).toBe('TLOG_SIGNER_MISMATCH');
  });

  it('reject an intoto 0.0.1 entry without a SET', async () => {
    const envelope = dsseEnvelope(signer, statement(SLSA, {}));
    const entry = await logEntry(
      infra.tlog,
      intotoV001Body(envelope.json, envelope.payload, signer.certificatePem),
    );
    const set = JSON.parse(setAnnotation(entry)) as { SignedEntryTimestamp: string };
    set.SignedEntryTimestamp = '';
    const artifact = legacyAttestation(envelope, {
      certificatePem: signer.certificatePem,
      set: JSON.stringify(set),
    });
    expect(rejection(artifact, keylessCheck([IDENTITY], trust(), KEYLESS)).code).toBe('TLOG_ERROR');
  });
});
