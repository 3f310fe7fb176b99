// Legacy `.sig` layers signed with a key, as `cosign sign --key` writes them.
import { generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { keyCheck, NOTHING, rejection, trustOf, verified } from '../support/checks.js';
import {
  DIGEST,
  ecKeyPair,
  hashedRekordBody,
  type Infra,
  legacySignature,
  logEntry,
  makeInfra,
  OTHER_DIGEST,
  publicPem,
  setAnnotation,
  signBytes,
  simpleSigningPayload,
} from '../support/fixtures.js';

const release = ecKeyPair();
const RELEASE = { name: 'release-2026', pem: publicPem(release) };
const WITH_TLOG = { ...NOTHING, tlog: true };

let infra: Infra;
beforeAll(async () => {
  infra = await makeInfra();
});

function signed(key = release, digest = DIGEST, hash = 'sha256') {
  const payload = simpleSigningPayload(digest);
  return { payload, signature: signBytes(key, payload, hash) };
}

describe('a key authority without ctlog (no transparency log required)', () => {
  it('verifies a signature by the policy key and names the key', () => {
    const { payload, signature } = signed();
    const result = verified(legacySignature(payload, signature), keyCheck([RELEASE]));
    expect(result.signer).toEqual({
      type: 'key',
      name: 'release-2026',
      fingerprint: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    expect(result.statement).toBeUndefined();
  });

  it('rejects a signature by another key, naming the policy key', () => {
    const { payload, signature } = signed(ecKeyPair());
    const error = rejection(legacySignature(payload, signature), keyCheck([RELEASE]));
    expect(error.code).toBe('SIGNATURE_MISMATCH');
    expect(error.kind).toBe('policy');
    expect(error.message).toBe('signature does not match key "release-2026"');
  });

  it('accepts any of several keys, and names all of them when none matches', () => {
    const other = ecKeyPair();
    const keys = [
      { name: 'a', pem: publicPem(ecKeyPair()) },
      { name: 'b', pem: publicPem(other) },
    ];
    const { payload, signature } = signed(other);
    expect(verified(legacySignature(payload, signature), keyCheck(keys)).signer).toMatchObject({ name: 'b' });
    const stranger = signed(ecKeyPair());
    expect(rejection(legacySignature(stranger.payload, stranger.signature), keyCheck(keys)).message).toBe(
      'signature does not match any of 2 keys ("a", "b")',
    );
  });

  it('rejects a tampered payload', () => {
    const { signature } = signed();
    const tampered = simpleSigningPayload(DIGEST, 'registry.example/acme/evil');
    expect(rejection(legacySignature(tampered, signature), keyCheck([RELEASE])).code).toBe(
      'SIGNATURE_MISMATCH',
    );
  });

  it('rejects a valid signature of another digest of the same repository (replay)', () => {
    const { payload, signature } = signed(release, OTHER_DIGEST);
    const error = rejection(legacySignature(payload, signature), keyCheck([RELEASE]));
    expect(error.code).toBe('BINDING_MISMATCH');
    expect(error.message).toBe(`signature is for "${OTHER_DIGEST}", not ${DIGEST}`);
  });

  it('verifies with the hash algorithm the policy names', () => {
    for (const hash of ['sha224', 'sha384', 'sha512']) {
      const { payload, signature } = signed(release, DIGEST, hash);
      expect(
        verified(legacySignature(payload, signature), keyCheck([RELEASE], NOTHING, undefined, hash)).signer
          .type,
      ).toBe('key');
      expect(rejection(legacySignature(payload, signature), keyCheck([RELEASE])).code).toBe(
        'SIGNATURE_MISMATCH',
      );
    }
  });

  it('verifies Ed25519 and RSA keys', () => {
    const ed = generateKeyPairSync('ed25519');
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    for (const key of [ed, rsa]) {
      const { payload, signature } = signed(key);
      const check = keyCheck([{ name: 'k', pem: publicPem(key) }], NOTHING, undefined, 'sha256');
      expect(verified(legacySignature(payload, signature), check).signer).toMatchObject({ name: 'k' });
    }
  });

  it('treats a policy key that cannot verify (X25519) as not matching', () => {
    const { payload, signature } = signed();
    const x25519 = { name: 'kex', pem: publicPem(generateKeyPairSync('x25519').publicKey) };
    expect(rejection(legacySignature(payload, signature), keyCheck([x25519])).code).toBe(
      'SIGNATURE_MISMATCH',
    );
  });

  it('does not consult a log entry the policy does not ask for', async () => {
    const { payload, signature } = signed();
    const unknownLog = await makeInfra();
    const entry = await logEntry(unknownLog.tlog, hashedRekordBody(payload, signature, publicPem(release)));
    const artifact = legacySignature(payload, signature, { set: setAnnotation(entry) });
    expect(verified(artifact, keyCheck([RELEASE])).signer.type).toBe('key');
  });

  it('refuses a malformed log-entry annotation even when not required', () => {
    const { payload, signature } = signed();
    const set = JSON.stringify({
      SignedEntryTimestamp: 'AAAA',
      Payload: { body: 'e30=', integratedTime: 1, logIndex: 1, logID: 'ab'.repeat(32) },
    });
    const error = rejection(legacySignature(payload, signature, { set }), keyCheck([RELEASE]));
    expect(error.code).toBe('MALFORMED_ARTIFACT');
    expect(error.kind).toBe('infrastructure');
  });
});

describe('a key authority with ctlog (one verified transparency-log entry required)', () => {
  async function withSet(key = release, signerPem = publicPem(release)) {
    const { payload, signature } = signed(key);
    const entry = await logEntry(infra.tlog, hashedRekordBody(payload, signature, signerPem));
    return legacySignature(payload, signature, { set: setAnnotation(entry) });
  }

  it('verifies the SET offline against the trust root', async () => {
    const check = keyCheck([RELEASE], WITH_TLOG, trustOf(infra.trustRoot.material));
    expect(verified(await withSet(), check).signer).toMatchObject({ name: 'release-2026' });
  });

  it('requires the entry: a signature without one is refused, not verified without it', () => {
    const { payload, signature } = signed();
    const error = rejection(
      legacySignature(payload, signature),
      keyCheck([RELEASE], WITH_TLOG, trustOf(infra.trustRoot.material)),
    );
    expect(error.code).toBe('TLOG_MISSING');
  });

  it('rejects a SET from a log the trust root does not know', async () => {
    const other = await makeInfra();
    const check = keyCheck([RELEASE], WITH_TLOG, trustOf(other.trustRoot.material));
    const error = rejection(await withSet(), check);
    expect(error.code).toBe('TLOG_ERROR');
    expect(error.cause).toMatchObject({ code: 'TLOG_INCLUSION_PROMISE_ERROR' });
  });

  it('rejects a log entry whose body names a different key (same signature and digest)', async () => {
    const check = keyCheck([RELEASE], WITH_TLOG, trustOf(infra.trustRoot.material));
    const error = rejection(await withSet(release, publicPem(ecKeyPair())), check);
    expect(error.code).toBe('TLOG_SIGNER_MISMATCH');
  });

  it('rejects a log entry for another signature', async () => {
    const { payload, signature } = signed();
    const otherSignature = signBytes(release, payload);
    const entry = await logEntry(infra.tlog, hashedRekordBody(payload, otherSignature, publicPem(release)));
    const check = keyCheck([RELEASE], WITH_TLOG, trustOf(infra.trustRoot.material));
    const error = rejection(legacySignature(payload, signature, { set: setAnnotation(entry) }), check);
    expect(error.code).toBe('TLOG_ERROR');
    expect(error.cause).toMatchObject({ code: 'TLOG_BODY_ERROR' });
  });
});
