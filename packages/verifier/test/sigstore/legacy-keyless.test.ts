// Legacy `.sig` layers signed keylessly: a Fulcio-style certificate (from the mock CA, with an SCT
// from the mock CT log), a Rekor SET, and optionally an RFC 3161 timestamp.
import { toSignedEntity, Verifier } from '@sigstore/verify';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeArtifact } from '../../src/sigstore/decode.js';
import { KEYLESS, keylessCheck, rejection, trustOf, verified } from '../support/checks.js';
import {
  type CertifiedKey,
  certify,
  DIGEST,
  GITHUB_ISSUER,
  hashedRekordBody,
  type Infra,
  legacySignature,
  logEntry,
  makeInfra,
  OTHER_DIGEST,
  serviceTime,
  setAnnotation,
  signBytes,
  simpleSigningPayload,
  timestampToken,
  WORKFLOW,
} from '../support/fixtures.js';

const IDENTITY = { issuer: GITHUB_ISSUER, subject: WORKFLOW };

let infra: Infra;
let signer: CertifiedKey;
beforeAll(async () => {
  infra = await makeInfra();
  signer = await certify(infra.ca);
});

async function keylessSignature(
  options: {
    key?: CertifiedKey;
    digest?: string;
    infra?: Infra;
    set?: boolean;
    tsa?: boolean;
    chainPem?: string;
  } = {},
) {
  const key = options.key ?? signer;
  const services = options.infra ?? infra;
  const payload = simpleSigningPayload(options.digest ?? DIGEST);
  const signature = signBytes(key, payload);
  const entry =
    options.set === false
      ? undefined
      : await logEntry(services.tlog, hashedRekordBody(payload, signature, key.certificatePem));
  const rfc3161 = options.tsa ? await timestampToken(services.tsa, signature) : undefined;
  return legacySignature(payload, signature, {
    certificatePem: key.certificatePem,
    ...(options.chainPem === undefined ? {} : { chainPem: options.chainPem }),
    ...(entry === undefined ? {} : { set: setAnnotation(entry) }),
    ...(rfc3161 === undefined ? {} : { rfc3161 }),
  });
}

const trust = () => trustOf(infra.trustRoot.material);

describe('keyless legacy signatures', () => {
  it('verify with certificate, SCT and SET, and report issuer and subject', async () => {
    const result = verified(await keylessSignature(), keylessCheck([IDENTITY], trust()));
    expect(result.signer).toEqual({ type: 'keyless', issuer: GITHUB_ISSUER, subject: WORKFLOW });
  });

  it('match regular expressions against the whole identity', async () => {
    const check = keylessCheck(
      [{ issuerRegExp: 'https://token\\.actions\\..*', subjectRegExp: 'https://github\\.com/acme/app/.*' }],
      trust(),
    );
    expect(verified(await keylessSignature(), check).signer).toMatchObject({ subject: WORKFLOW });
  });

  it('reject an identity that only matches as an unanchored pattern', async () => {
    const evil = await certify(infra.ca, {
      san: 'https://github.com/acme/app-evil/.github/workflows/x.yml@refs/heads/main',
    });
    const artifact = await keylessSignature({ key: evil });
    for (const identity of [
      { issuer: GITHUB_ISSUER, subjectRegExp: 'https://github.com/acme/app' },
      { issuerRegExp: 'actions', subject: WORKFLOW },
      { issuer: GITHUB_ISSUER, subject: 'https://github.com/acme/app' },
    ]) {
      const error = rejection(artifact, keylessCheck([identity], trust()));
      expect(error.code).toBe('IDENTITY_MISMATCH');
    }
    // sigstore-js's own policy check would have accepted it: the trap this guards against.
    const entity = toSignedEntity(decodeArtifact(artifact).bundle, simpleSigningPayload());
    const sigstore = new Verifier({ ...infra.trustRoot.material });
    expect(() =>
      sigstore.verify(entity, {
        subjectAlternativeName: 'https://github.com/acme/app',
        extensions: { issuer: GITHUB_ISSUER },
      }),
    ).not.toThrow();
  });

  it('name the certificate identity and the wanted identities when none matches', async () => {
    const error = rejection(
      await keylessSignature(),
      keylessCheck([{ issuer: 'https://accounts.google.com', subject: WORKFLOW }], trust()),
    );
    expect(error.message).toBe(
      `certificate identity (issuer "${GITHUB_ISSUER}", subjects ["${WORKFLOW}"]) matches none of: issuer "https://accounts.google.com" subject "${WORKFLOW}"`,
    );
  });

  it('reject a certificate without issuer extension, naming what it has', async () => {
    const anonymous = await certify(infra.ca, { issuer: null });
    const error = rejection(await keylessSignature({ key: anonymous }), keylessCheck([IDENTITY], trust()));
    expect(error.message).toBe(
      `certificate identity (issuer null, subjects ["${WORKFLOW}"]) matches none of: issuer "${GITHUB_ISSUER}" subject "${WORKFLOW}"`,
    );
  });

  it('reject a replayed signature of another digest', async () => {
    const error = rejection(
      await keylessSignature({ digest: OTHER_DIGEST }),
      keylessCheck([IDENTITY], trust()),
    );
    expect(error.code).toBe('BINDING_MISMATCH');
  });

  it('reject a certificate that expired before the log integrated the signature', async () => {
    const now = serviceTime().getTime();
    const late = await makeInfra({ caClock: new Date(now), tlogClock: new Date(now + 60 * 60 * 1000) });
    const key = await certify(late.ca);
    const error = rejection(
      await keylessSignature({ key, infra: late }),
      keylessCheck([IDENTITY], trustOf(late.trustRoot.material)),
    );
    expect(error.code).toBe('CERTIFICATE_ERROR');
    expect(error.cause).toMatchObject({ code: 'CERTIFICATE_ERROR' });
  });

  it('reject a certificate without SCT unless the authority sets insecureIgnoreSCT', async () => {
    const noSct = await makeInfra({ sct: false });
    const key = await certify(noSct.ca);
    const artifact = await keylessSignature({ key, infra: noSct });
    const material = trustOf(noSct.trustRoot.material);
    expect(rejection(artifact, keylessCheck([IDENTITY], material)).code).toBe('SCT_MISSING');
    const ignoring = keylessCheck([IDENTITY], material, { ...KEYLESS, sct: false });
    expect(verified(artifact, ignoring).signer.type).toBe('keyless');
  });

  it('still verify an SCT that is present when the authority sets insecureIgnoreSCT (sigstore-js checks every SCT)', async () => {
    const ignoring = { ...KEYLESS, sct: false };
    expect(verified(await keylessSignature(), keylessCheck([IDENTITY], trust(), ignoring)).signer.type).toBe(
      'keyless',
    );
    const error = rejection(
      await keylessSignature(),
      keylessCheck([IDENTITY], { ...trust(), ctlogs: [] }, ignoring),
    );
    expect(error.code).toBe('CERTIFICATE_ERROR');
    expect(error.cause).toMatchObject({ message: 'SCT verification failed' });
  });

  it('reject a certificate from a CA the trust root does not hold', async () => {
    const rogue = await makeInfra();
    const key = await certify(rogue.ca);
    const artifact = await keylessSignature({ key });
    const error = rejection(artifact, keylessCheck([IDENTITY], trust()));
    expect(error.code).toBe('CERTIFICATE_ERROR');
    expect(error.cause).toMatchObject({ cause: { message: 'no valid certificate path found' } });
  });

  it('take intermediates from the trust root only, never from the chain annotation', async () => {
    const rogue = await makeInfra();
    const key = await certify(rogue.ca);
    const rootPem = `-----BEGIN CERTIFICATE-----\n${Buffer.from(rogue.ca.rootCertificate.buffer).toString('base64')}\n-----END CERTIFICATE-----\n`;
    const error = rejection(
      await keylessSignature({ key, chainPem: rootPem }),
      keylessCheck([IDENTITY], trust()),
    );
    expect(error.code).toBe('CERTIFICATE_ERROR');
    expect(error.message).toContain('intermediate certificates come from the trust root');
    expect(error.cause).toMatchObject({ cause: { message: 'no valid certificate path found' } });
  });

  it('reject a log entry whose body names another certificate', async () => {
    const payload = simpleSigningPayload();
    const signature = signBytes(signer, payload);
    const other = await certify(infra.ca);
    const entry = await logEntry(infra.tlog, hashedRekordBody(payload, signature, other.certificatePem));
    const artifact = legacySignature(payload, signature, {
      certificatePem: signer.certificatePem,
      set: setAnnotation(entry),
    });
    expect(rejection(artifact, keylessCheck([IDENTITY], trust())).code).toBe('TLOG_SIGNER_MISMATCH');
  });

  it('deny a keyless signature without any timestamp with a reason, not a TypeError', async () => {
    const artifact = await keylessSignature({ set: false });
    // The trap: sigstore-js itself throws a TypeError when nothing gives a time.
    const entity = toSignedEntity(decodeArtifact(artifact).bundle, simpleSigningPayload());
    const bare = new Verifier(
      { ...infra.trustRoot.material },
      { tlogThreshold: 0, timestampThreshold: 0, ctlogThreshold: 0 },
    );
    expect(() => bare.verify(entity)).toThrow(TypeError);
    const withoutLog = rejection(
      artifact,
      keylessCheck([IDENTITY], trust(), { tlog: false, timestampAuthority: false, sct: true }),
    );
    expect(withoutLog.code).toBe('TIMESTAMP_MISSING');
    expect(rejection(artifact, keylessCheck([IDENTITY], trust())).code).toBe('TLOG_MISSING');
  });

  it('use an RFC 3161 timestamp when the authority sets rfc3161timestamp', async () => {
    const tsaOnly = { tlog: false, timestampAuthority: true, sct: true };
    const stamped = await keylessSignature({ set: false, tsa: true });
    expect(verified(stamped, keylessCheck([IDENTITY], trust(), tsaOnly)).signer.type).toBe('keyless');
    const unstamped = await keylessSignature({ tsa: false });
    expect(rejection(unstamped, keylessCheck([IDENTITY], trust(), tsaOnly)).code).toBe('TIMESTAMP_MISSING');
    const both = { tlog: true, timestampAuthority: true, sct: true };
    expect(rejection(stamped, keylessCheck([IDENTITY], trust(), both)).code).toBe('TLOG_MISSING');
    expect(
      verified(await keylessSignature({ tsa: true }), keylessCheck([IDENTITY], trust(), both)).signer.type,
    ).toBe('keyless');
  });

  it('report a timestamp whose time sigstore-js cannot read as malformed', async () => {
    const fractional = await makeInfra({ tsaClock: new Date(serviceTime().getTime() + 500) });
    const payload = simpleSigningPayload();
    const signature = signBytes(signer, payload);
    const artifact = legacySignature(payload, signature, {
      certificatePem: signer.certificatePem,
      rfc3161: await timestampToken(fractional.tsa, signature),
    });
    const error = rejection(
      artifact,
      keylessCheck([IDENTITY], trust(), { tlog: false, timestampAuthority: true, sct: true }),
    );
    expect(error.code).toBe('MALFORMED_ARTIFACT');
    expect(error.cause).toMatchObject({ message: 'invalid time' });
  });

  it('reject a timestamp from an authority the trust root does not hold', async () => {
    const other = await makeInfra();
    const payload = simpleSigningPayload();
    const signature = signBytes(signer, payload);
    const artifact = legacySignature(payload, signature, {
      certificatePem: signer.certificatePem,
      rfc3161: await timestampToken(other.tsa, signature),
    });
    const error = rejection(
      artifact,
      keylessCheck([IDENTITY], trust(), { tlog: false, timestampAuthority: true, sct: true }),
    );
    expect(error.code).toBe('TIMESTAMP_ERROR');
  });

  it('check a timestamp the signature carries even when the authority does not ask for one', async () => {
    const payload = simpleSigningPayload();
    const signature = signBytes(signer, payload);
    const entry = await logEntry(infra.tlog, hashedRekordBody(payload, signature, signer.certificatePem));
    // A token over other bytes: the log entry alone would pass, the invalid timestamp must not.
    const invalid = legacySignature(payload, signature, {
      certificatePem: signer.certificatePem,
      set: setAnnotation(entry),
      rfc3161: await timestampToken(infra.tsa, Buffer.from('other signature')),
    });
    expect(rejection(invalid, keylessCheck([IDENTITY], trust())).code).toBe('TIMESTAMP_ERROR');
    // A valid one is accepted under the default (log-entry) requirements.
    const valid = await keylessSignature({ tsa: true });
    expect(verified(valid, keylessCheck([IDENTITY], trust())).signer.type).toBe('keyless');
  });

  it('reject a signature without certificate for a keyless authority', async () => {
    const payload = simpleSigningPayload();
    const artifact = legacySignature(payload, signBytes(signer, payload));
    expect(rejection(artifact, keylessCheck([IDENTITY], trust())).code).toBe('CERTIFICATE_MISSING');
  });

  it('reject a signature that does not verify with the certificate key', async () => {
    const payload = simpleSigningPayload();
    const wrong = signBytes(signer, simpleSigningPayload(OTHER_DIGEST));
    const entry = await logEntry(infra.tlog, hashedRekordBody(payload, wrong, signer.certificatePem));
    const artifact = legacySignature(payload, wrong, {
      certificatePem: signer.certificatePem,
      set: setAnnotation(entry),
    });
    const error = rejection(artifact, keylessCheck([IDENTITY], trust()));
    expect(error.code).toBe('SIGNATURE_MISMATCH');
    expect(error.cause).toMatchObject({ code: 'SIGNATURE_ERROR' });
  });
});
