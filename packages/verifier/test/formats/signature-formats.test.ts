// The registered formats: what an authority reads by name or by default, where hints look, and
// what each built-in format asks for, counts and says. Discovery against registries is in
// image-verifier.test.ts and third-format.test.ts.
import { describe, expect, it } from 'vitest';
import type { DiscoveredArtifact } from '../../src/artifacts.js';
import { bundleFormat } from '../../src/formats/bundle.js';
import { SIGNATURE_FORMATS, type SignatureFormat, SignatureFormats } from '../../src/formats/index.js';
import { legacyFormat } from '../../src/formats/legacy.js';
import { compileAuthorities } from '../../src/policy/compile.js';
import { PolicyCompileError } from '../../src/policy/errors.js';
import { ecKeyPair, publicPem } from '../support/fixtures.js';
import { clusterImagePolicy } from '../support/policies.js';

const toy: SignatureFormat = {
  name: 'toy',
  queries: () => [],
  counts: () => false,
  searched: () => 'nowhere',
  found: () => 'nothing',
};

const bytes = new Uint8Array([1]);
const signature: DiscoveredArtifact = {
  format: 'legacy-signature',
  source: 's',
  payload: bytes,
  annotations: {},
};
const attestation: DiscoveredArtifact = {
  format: 'legacy-attestation',
  source: 'a',
  envelope: bytes,
  annotations: {},
};
const bundle = (predicateType: string | undefined): DiscoveredArtifact => ({
  format: 'bundle',
  source: 'b',
  bundle: bytes,
  artifactType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
  predicateType,
});
const unreadable = (listedAs: 'legacy-signature' | 'bundle'): DiscoveredArtifact => ({
  format: 'unreadable',
  source: 'u',
  listedAs,
  reason: 'too large',
});

describe('SignatureFormats', () => {
  it('reads both formats without signatureFormat, the legacy tags first, and a named format alone', () => {
    expect(SIGNATURE_FORMATS.all).toEqual([legacyFormat, bundleFormat]);
    expect(SIGNATURE_FORMATS.defaults).toEqual(['legacy', 'bundle']);
    expect(SIGNATURE_FORMATS.select(undefined)).toEqual([legacyFormat, bundleFormat]);
    expect(SIGNATURE_FORMATS.select('legacy')).toEqual([legacyFormat]);
    expect(SIGNATURE_FORMATS.select('bundle')).toEqual([bundleFormat]);
    expect(SIGNATURE_FORMATS.select('dsse')).toBeUndefined();
  });

  it('reads the legacy tags alone without signatureFormat when told to, as policy-controller does', () => {
    const upstream = SIGNATURE_FORMATS.withDefaults(['legacy']);
    expect(upstream.select(undefined)).toEqual([legacyFormat]);
    expect(upstream.others([legacyFormat])).toEqual([bundleFormat]);
    expect(upstream.all).toEqual(SIGNATURE_FORMATS.all);
    expect(SIGNATURE_FORMATS.withDefaults(['bundle', 'legacy']).select(undefined)).toEqual([
      bundleFormat,
      legacyFormat,
    ]);
    expect(SIGNATURE_FORMATS.select(undefined)).toEqual([legacyFormat, bundleFormat]);
  });

  it('hints from every other registered format, a new one last', () => {
    expect(SIGNATURE_FORMATS.others([legacyFormat])).toEqual([bundleFormat]);
    expect(SIGNATURE_FORMATS.others([legacyFormat, bundleFormat])).toEqual([]);
    const withToy = SIGNATURE_FORMATS.with(toy);
    expect(withToy.others([legacyFormat])).toEqual([bundleFormat, toy]);
    expect(withToy.others([legacyFormat, bundleFormat])).toEqual([toy]);
    expect(withToy.select(undefined)).toEqual([legacyFormat, bundleFormat]);
    expect(withToy.select('toy')).toEqual([toy]);
  });

  it('refuses a name registered twice, and defaults that are none, repeated or not registered', () => {
    expect(() => SIGNATURE_FORMATS.with(legacyFormat)).toThrow(
      'signature format "legacy" is registered twice',
    );
    expect(() => new SignatureFormats({ formats: [bundleFormat], defaults: ['legacy'] })).toThrow(
      'default signature format "legacy" is not registered',
    );
    expect(() => SIGNATURE_FORMATS.withDefaults([])).toThrow('no default signature format');
    expect(() => SIGNATURE_FORMATS.withDefaults(['bundle', 'bundle'])).toThrow(
      'default signature format "bundle" is named twice',
    );
  });

  it('make a policy naming an unregistered format fail to compile, with the field', async () => {
    const cip = clusterImagePolicy([{ key: { data: publicPem(ecKeyPair()) }, signatureFormat: 'bundle' }]);
    const legacyOnly = new SignatureFormats({ formats: [legacyFormat], defaults: ['legacy'] });
    const error = await compileAuthorities(cip, { formats: legacyOnly }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PolicyCompileError);
    expect(error).toMatchObject({
      code: 'UNSUPPORTED_SIGNATURE_FORMAT',
      path: 'spec.authorities[0].signatureFormat',
      problem: '"bundle" is not a signature format this verifier reads (legacy)',
    });
  });
});

const DEFAULT = { oci11Referrers: false };
const OCI11 = { oci11Referrers: true };

describe('the legacy format', () => {
  it('reads the .sig tag for signatures and the .att tag for attestations', () => {
    expect(legacyFormat.queries('signatures', DEFAULT).map((q) => q.query)).toEqual([
      { kind: 'digest-tag', suffix: 'sig', mediaType: 'application/vnd.dev.cosign.simplesigning.v1+json' },
    ]);
    expect(legacyFormat.queries('attestations', DEFAULT).map((q) => q.query)).toEqual([
      { kind: 'digest-tag', suffix: 'att', mediaType: 'application/vnd.dsse.envelope.v1+json' },
    ]);
  });

  it('with enable-oci11, also reads the experimental signature referrers and in-toto referrers', () => {
    const [, signatures] = legacyFormat.queries('signatures', OCI11);
    const [, attestations] = legacyFormat.queries('attestations', OCI11);
    expect(signatures?.query).toEqual({
      kind: 'referrers',
      artifactType: { equals: 'application/vnd.dev.cosign.artifact.sig.v1+json' },
      layers: { pick: 'each', mediaType: 'application/vnd.dev.cosign.simplesigning.v1+json' },
    });
    expect(attestations?.query).toEqual({
      kind: 'referrers',
      artifactType: { includes: 'in-toto' },
      layers: { pick: 'first' },
    });
    const stored = {
      source: 's',
      bytes,
      annotations: { a: 'b' },
      manifestAnnotations: {},
      artifactType: 't',
    };
    expect(signatures?.read(stored)).toEqual({
      format: 'legacy-signature',
      source: 's',
      payload: bytes,
      annotations: { a: 'b' },
    });
    expect(attestations?.read(stored)).toEqual({
      format: 'legacy-attestation',
      source: 's',
      envelope: bytes,
      annotations: { a: 'b' },
    });
  });

  it('counts its signatures as signatures and its attestations as attestations, readable or not', () => {
    expect(legacyFormat.counts(signature, 'signatures')).toBe(true);
    expect(legacyFormat.counts(unreadable('legacy-signature'), 'signatures')).toBe(true);
    expect(legacyFormat.counts(signature, 'attestations')).toBe(false);
    expect(legacyFormat.counts(attestation, 'attestations')).toBe(true);
    expect(legacyFormat.counts(bundle(undefined), 'signatures')).toBe(false);
  });

  it('says where it looked and what it holds', () => {
    expect(legacyFormat.searched('signature')).toBe('in the legacy .sig/.att tags');
    expect(legacyFormat.found('signature', 1)).toBe(
      '1 legacy signature (the .sig/.att tags), which this authority does not read',
    );
    expect(legacyFormat.found('attestation', 2)).toBe(
      '2 legacy attestations (the .sig/.att tags), which this authority does not read',
    );
  });
});

describe('the bundle format', () => {
  it('reads the Sigstore bundle referrers for both, passing over those announced as the other kind', () => {
    const [signatures] = bundleFormat.queries('signatures', OCI11);
    const [attestations] = bundleFormat.queries('attestations', DEFAULT);
    const referrers = {
      kind: 'referrers',
      artifactType: { startsWith: 'application/vnd.dev.sigstore.bundle' },
      confirmedAs: 'Sigstore bundle',
      layers: { pick: 'one', mediaTypePrefix: 'application/vnd.dev.sigstore.bundle', name: 'bundle' },
    };
    const annotation = 'dev.sigstore.bundle.predicateType';
    expect(signatures?.query).toEqual({
      ...referrers,
      skipListed: { annotation, differsFrom: 'https://sigstore.dev/cosign/sign/v1' },
    });
    expect(attestations?.query).toEqual({
      ...referrers,
      skipListed: { annotation, equals: 'https://sigstore.dev/cosign/sign/v1' },
    });
    expect(
      signatures?.read({
        source: 'r',
        bytes,
        annotations: {},
        manifestAnnotations: { 'dev.sigstore.bundle.predicateType': 'p' },
        artifactType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
      }),
    ).toEqual({ ...bundle('p'), source: 'r' });
  });

  it('counts a bundle as a signature unless announced as another predicate type, and as an attestation unless announced as a signature', () => {
    expect(bundleFormat.counts(bundle(undefined), 'signatures')).toBe(true);
    expect(bundleFormat.counts(bundle('https://sigstore.dev/cosign/sign/v1'), 'signatures')).toBe(true);
    expect(bundleFormat.counts(bundle('https://slsa.dev/provenance/v1'), 'signatures')).toBe(false);
    expect(bundleFormat.counts(bundle('https://slsa.dev/provenance/v1'), 'attestations')).toBe(true);
    expect(bundleFormat.counts(bundle(undefined), 'attestations')).toBe(true);
    expect(bundleFormat.counts(bundle('https://sigstore.dev/cosign/sign/v1'), 'attestations')).toBe(false);
    expect(bundleFormat.counts(unreadable('bundle'), 'signatures')).toBe(true);
    expect(bundleFormat.counts(signature, 'signatures')).toBe(false);
  });

  it('says where it looked and what it holds', () => {
    expect(bundleFormat.searched('attestation')).toBe('as a Sigstore bundle');
    expect(bundleFormat.found('signature', 1)).toBe(
      '1 Sigstore bundle (what cosign 3 writes by default), which this authority does not read',
    );
    expect(bundleFormat.found('signature', 3)).toMatch(/^3 Sigstore bundles /);
  });
});
