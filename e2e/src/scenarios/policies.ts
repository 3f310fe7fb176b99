// ClusterImagePolicy objects for the scenarios, in the `policy.sigstore.dev` format that
// policy-controller users write. They are applied to the cluster; Signet watches them.

export interface KeyPolicyOptions {
  readonly name: string;
  /** Image globs, matched against `host/repo@digest` (or `:tag`), e.g. `127.0.0.1:5000/app*`. */
  readonly images: readonly string[];
  /** PEM public key (`cosign.pub`) the signature must verify with. */
  readonly publicKeyPem: string;
  readonly mode?: 'enforce' | 'warn';
  /** Where the signature is looked for: `legacy` (`.sig` tag, the default) or `bundle`. */
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
