// Sigstore bundles (v0.1-v0.3) as OCI referrers, made with @sigstore/sign's builders against the
// mock CA, Rekor and TSA: keyless and keyed, with inclusion proofs, SETs and timestamps.
import { bundleToJSON } from '@sigstore/bundle';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeArtifact } from '../../src/sigstore/decode.js';
import { COSIGN_SIGN_PREDICATE_TYPE } from '../../src/sigstore/payload.js';
import { KEYLESS, keyCheck, keylessCheck, NOTHING, rejection, trustOf, verified } from '../support/checks.js';
import {
  bundleArtifact,
  type CertifiedKey,
  certify,
  dsseBundle,
  ecKeyPair,
  GITHUB_ISSUER,
  type Infra,
  intotoV001Body,
  logEntry,
  makeInfra,
  messageBundle,
  OTHER_DIGEST,
  publicPem,
  rekorWitness,
  statement,
  tlogEntry,
  tsaWitness,
  WORKFLOW,
} from '../support/fixtures.js';

const IDENTITY = { issuer: GITHUB_ISSUER, subject: WORKFLOW };
const signing = (digest?: string) => statement(COSIGN_SIGN_PREDICATE_TYPE, {}, digest);

let infra: Infra;
let signer: CertifiedKey;
beforeAll(async () => {
  infra = await makeInfra();
  signer = await certify(infra.ca);
});

const trust = () => trustOf(infra.trustRoot.material);

describe('keyless bundles', () => {
  it('verify a v0.3 bundle with inclusion proof and SET', async () => {
    const bundle = await dsseBundle(signer, signing(), [rekorWitness(infra.tlog)]);
    expect(bundle.mediaType).toBe('application/vnd.dev.sigstore.bundle.v0.3+json');
    const result = verified(bundleArtifact(bundle), keylessCheck([IDENTITY], trust()));
    expect(result).toMatchObject({
      format: 'bundle',
      signer: { issuer: GITHUB_ISSUER },
      statement: { predicateType: COSIGN_SIGN_PREDICATE_TYPE },
    });
  });

  it('verify a v0.2 bundle with a certificate chain (only its leaf is used)', async () => {
    const bundle = await dsseBundle(signer, signing(), [rekorWitness(infra.tlog)], true);
    expect(bundle.mediaType).toBe('application/vnd.dev.sigstore.bundle+json;version=0.2');
    expect(verified(bundleArtifact(bundle), keylessCheck([IDENTITY], trust())).signer.type).toBe('keyless');
  });

  it('verify with only an RFC 3161 timestamp when the authority asks for one', async () => {
    const bundle = await dsseBundle(signer, signing(), [tsaWitness(infra.tsa)]);
    const tsaOnly = { tlog: false, timestampAuthority: true, sct: true };
    expect(verified(bundleArtifact(bundle), keylessCheck([IDENTITY], trust(), tsaOnly)).signer.type).toBe(
      'keyless',
    );
    expect(rejection(bundleArtifact(bundle), keylessCheck([IDENTITY], trust())).code).toBe('TLOG_MISSING');
  });

  it('reject a log entry with an inclusion proof only: it gives no time for the certificate', async () => {
    const bundle = await dsseBundle(signer, signing(), [rekorWitness(infra.tlog)]);
    const [entry] = bundle.verificationMaterial.tlogEntries;
    if (entry === undefined) throw new Error('no entry');
    entry.inclusionPromise = undefined;
    const error = rejection(bundleArtifact(bundle), keylessCheck([IDENTITY], trust()));
    expect(error.code).toBe('TIMESTAMP_ERROR');
  });

  it('reject a bundle for another digest', async () => {
    const bundle = await dsseBundle(signer, signing(OTHER_DIGEST), [rekorWitness(infra.tlog)]);
    expect(rejection(bundleArtifact(bundle), keylessCheck([IDENTITY], trust())).code).toBe(
      'BINDING_MISMATCH',
    );
  });

  it('reject a tampered payload', async () => {
    const bundle = await dsseBundle(signer, signing(), [rekorWitness(infra.tlog)]);
    const json = bundleToJSON(bundle) as { dsseEnvelope: { payload: string } };
    json.dsseEnvelope.payload = statement(COSIGN_SIGN_PREDICATE_TYPE, { tampered: true }).toString('base64');
    const error = rejection(bundleArtifact(json), keylessCheck([IDENTITY], trust()));
    expect(error.code).toBe('TLOG_ERROR');
    expect(error.cause).toMatchObject({ code: 'TLOG_BODY_ERROR', message: 'DSSE payload hash mismatch' });
    const key = ecKeyPair();
    const keyed = bundleToJSON(await dsseBundle(key, signing(), [])) as { dsseEnvelope: { payload: string } };
    keyed.dsseEnvelope.payload = statement(COSIGN_SIGN_PREDICATE_TYPE, { tampered: true }).toString('base64');
    expect(rejection(bundleArtifact(keyed), keyCheck([{ name: 'k', pem: publicPem(key) }])).code).toBe(
      'SIGNATURE_MISMATCH',
    );
  });

  it('verify an intoto 0.0.1 entry inside a bundle, and reject one without SET', async () => {
    const payload = signing();
    const base = await dsseBundle(signer, payload, []);
    const envelope = base.content.$case === 'dsseEnvelope' ? base.content.dsseEnvelope : undefined;
    if (envelope === undefined) throw new Error('not DSSE');
    const logged = await logEntry(
      infra.tlog,
      intotoV001Body(Buffer.from('{}'), payload, signer.certificatePem),
    );
    base.verificationMaterial.tlogEntries = [tlogEntry(logged)];
    expect(verified(bundleArtifact(base), keylessCheck([IDENTITY], trust())).signer.type).toBe('keyless');
    base.verificationMaterial.tlogEntries = [tlogEntry(logged, false, true)];
    expect(rejection(bundleArtifact(base), keylessCheck([IDENTITY], trust())).message).toBe(
      'intoto 0.0.1 log entry without a signed entry timestamp',
    );
  });
});

describe('keyed bundles', () => {
  const key = ecKeyPair();
  const KEY = { name: 'ci', pem: publicPem(key) };

  it('verify without transparency log when the authority has no ctlog', async () => {
    const bundle = await dsseBundle(key, signing(), []);
    expect(bundle.verificationMaterial.content.$case).toBe('publicKey');
    expect(verified(bundleArtifact(bundle), keyCheck([KEY])).signer).toMatchObject({
      type: 'key',
      name: 'ci',
    });
  });

  it('verify with an inclusion proof when the authority has ctlog', async () => {
    const bundle = await dsseBundle(key, signing(), [rekorWitness(infra.tlog)]);
    expect(
      verified(bundleArtifact(bundle), keyCheck([KEY], { ...NOTHING, tlog: true }, trust())).signer.type,
    ).toBe('key');
  });

  it('reject a bundle by another key', async () => {
    const bundle = await dsseBundle(ecKeyPair(), signing(), []);
    expect(rejection(bundleArtifact(bundle), keyCheck([KEY])).code).toBe('SIGNATURE_MISMATCH');
  });

  it('verify a keyless-signed bundle only against its certificate, never a policy key', async () => {
    const bundle = await dsseBundle(signer, signing(), [rekorWitness(infra.tlog)]);
    expect(rejection(bundleArtifact(bundle), keyCheck([KEY])).code).toBe('SIGNATURE_MISMATCH');
    expect(
      rejection(
        bundleArtifact(await dsseBundle(key, signing(), [])),
        keylessCheck([IDENTITY], trust(), KEYLESS),
      ).code,
    ).toBe('CERTIFICATE_MISSING');
  });
});

describe('unsupported and malformed bundles', () => {
  it('refuse message-signature bundles: they name no image', async () => {
    const bundle = await messageBundle(ecKeyPair(), Buffer.from('x'), []);
    const error = rejection(bundleArtifact(bundle), keyCheck([{ name: 'k', pem: publicPem(ecKeyPair()) }]));
    expect(error.code).toBe('UNSUPPORTED_ARTIFACT');
    expect(error.kind).toBe('infrastructure');
  });

  it('refuse bytes that are not a bundle', () => {
    const artifact = { ...bundleArtifact({}), bundle: Buffer.from('not json') };
    expect(() => decodeArtifact(artifact)).toThrow(expect.objectContaining({ code: 'MALFORMED_ARTIFACT' }));
    expect(() => decodeArtifact(bundleArtifact({ mediaType: 'x' }))).toThrow(
      expect.objectContaining({ code: 'MALFORMED_ARTIFACT' }),
    );
  });
});
