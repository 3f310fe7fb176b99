// ClusterImagePolicy objects for the scenarios, in the `policy.sigstore.dev` format that
// policy-controller users write. They are applied to the cluster; Signet watches them.

export interface KeyPolicyOptions {
  readonly name: string;
  /** Image globs, matched against `host/repo@digest` (or `:tag`), e.g. `127.0.0.1:5000/app*`. */
  readonly images: readonly string[];
  /** PEM public key (`cosign.pub`) the signature must verify with. */
  readonly publicKeyPem: string;
  readonly mode?: 'enforce' | 'warn';
  /** Only where the signature is looked for: `legacy` (`.sig` tag) or `bundle`; without it, both. */
  readonly signatureFormat?: 'legacy' | 'bundle';
}

/** A keyed policy: a signature by `publicKeyPem`, no transparency log (the test key's never were). */
export function keyPolicy(options: KeyPolicyOptions): object {
  return {
    apiVersion: 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata: { name: options.name },
    spec: {
      ...(options.mode ? { mode: options.mode } : {}),
      images: options.images.map((glob) => ({ glob })),
      authorities: [
        {
          name: 'test-key',
          key: { data: options.publicKeyPem },
          ...(options.signatureFormat ? { signatureFormat: options.signatureFormat } : {}),
        },
      ],
    },
  };
}

export interface KeylessPolicyOptions {
  readonly name: string;
  readonly images: readonly string[];
  /** TrustRoot with the test CA and the test Rekor key. */
  readonly trustRoot: string;
  readonly issuer: string;
  readonly subject: string;
}

/**
 * A keyless policy trusting a private Sigstore (a TrustRoot with `sigstoreKeys`): certificate from
 * the test CA with this issuer and subject, a Rekor entry signed by the test log; no SCT (the test
 * CA has no CT log, hence `insecureIgnoreSCT`).
 */
export function keylessPolicy(options: KeylessPolicyOptions): object {
  return {
    apiVersion: 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata: { name: options.name },
    spec: {
      images: options.images.map((glob) => ({ glob })),
      authorities: [
        {
          name: 'test-keyless',
          keyless: {
            trustRootRef: options.trustRoot,
            insecureIgnoreSCT: true,
            identities: [{ issuer: options.issuer, subject: options.subject }],
          },
          ctlog: { trustRootRef: options.trustRoot },
        },
      ],
    },
  };
}

export interface SelfVerificationPolicyOptions {
  readonly name: string;
  /** Globs of Signet's image repositories. */
  readonly images: readonly string[];
  /** The project's release key (PEM). */
  readonly publicKeyPem: string;
  /** The version the SBOM must describe Signet at. */
  readonly version: string;
}

/**
 * Signet's own image, as a cluster that runs it (or its CLI) would require it: the project's
 * signature AND a CycloneDX SBOM attested by the same key, whose content a Rego policy checks (the
 * app is @signet/webhook at `version`, and so is every @signet library it lists). Authorities are
 * alternatives in policy-controller's format; the spec-level Rego policy requires both.
 */
export function selfVerificationPolicy(options: SelfVerificationPolicyOptions): object {
  const version = JSON.stringify(options.version);
  const sbom = [
    'package sigstore',
    'default isCompliant = false',
    'isCompliant {',
    '  input.predicateType == "https://cyclonedx.org/bom"',
    '  app := input.predicate.metadata.component',
    '  app.group == "@signet"',
    '  app.name == "webhook"',
    `  app.version == ${version}`,
    `  count([c | c := input.predicate.components[_]; c.group == "@signet"; c.version != ${version}]) == 0`,
    '}',
    '',
  ].join('\n');
  const both = [
    'package sigstore',
    'default isCompliant = false',
    'isCompliant {',
    '  count(input.authorityMatches["release-signature"].signatures) > 0',
    '  count(input.authorityMatches["release-sbom"].attestations.sbom) > 0',
    '}',
    '',
  ].join('\n');
  return {
    apiVersion: 'policy.sigstore.dev/v1beta1',
    kind: 'ClusterImagePolicy',
    metadata: { name: options.name },
    spec: {
      images: options.images.map((glob) => ({ glob })),
      authorities: [
        { name: 'release-signature', key: { data: options.publicKeyPem } },
        {
          name: 'release-sbom',
          key: { data: options.publicKeyPem },
          attestations: [{ name: 'sbom', predicateType: 'cyclonedx', policy: { type: 'rego', data: sbom } }],
        },
      ],
      policy: { type: 'rego', data: both },
    },
  };
}
