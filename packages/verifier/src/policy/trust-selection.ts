// Which trust roots an authority's evidence is checked against: the certificate authorities and
// CT logs of `keyless.trustRootRef` (or a `ca-cert`), the Rekor logs of `ctlog.trustRootRef`, the
// timestamp authorities of `rfc3161timestamp.trustRootRef`, each falling back to the keyless trust
// root and then to the public-good root. Only what the requirements need is loaded.
import type { Authority } from '@signet/k8s-types';
import { toTrustMaterial } from '@sigstore/verify';
import { SignatureCheckError } from '../sigstore/errors.js';
import type { Requirements, SignatureCheck } from '../sigstore/verify.js';
import type { TrustRootResolver } from '../trust/compile.js';
import { TrustRootError } from '../trust/errors.js';
import type { CompiledTrustRoot } from '../trust/trusted-root.js';

export type Trust = SignatureCheck['trust'];

export async function trustFor(
  authority: Authority,
  requirements: Requirements,
  caCertificates: Buffer[] | undefined,
  resolver: TrustRootResolver,
): Promise<Trust | SignatureCheckError> {
  const keyless = authority.keyless;
  const mainRef = keyless?.trustRootRef || undefined;
  const need = async (ref: string | undefined, wanted: boolean): Promise<CompiledTrustRoot | undefined> =>
    wanted ? resolver(ref) : undefined;
  try {
    const caRoot = await need(mainRef, keyless !== undefined && caCertificates === undefined);
    // CT logs are loaded even when SCTs are not required: sigstore-js verifies every SCT a
    // certificate carries, so with insecureIgnoreSCT a present SCT must still be from a known log.
    const ctRoot = await need(mainRef, keyless !== undefined);
    const tlogRoot = await need(authority.ctlog?.trustRootRef || mainRef, requirements.tlog);
    // Keyless: TSAs are loaded even when not required, to check the timestamps a signature carries.
    const tsaRoot = await need(
      authority.rfc3161timestamp?.trustRootRef || mainRef,
      requirements.timestampAuthority || keyless !== undefined,
    );
    const trust: Trust = {
      certificateAuthorities:
        caCertificates === undefined
          ? (caRoot?.material.certificateAuthorities ?? [])
          : caMaterial(caCertificates),
      ctlogs: ctRoot?.material.ctlogs ?? [],
      tlogs: tlogRoot?.material.tlogs ?? [],
      timestampAuthorities: tsaRoot?.material.timestampAuthorities ?? [],
    };
    const parts: TrustPart[] = [
      {
        root: caRoot,
        count: trust.certificateAuthorities.length,
        what: 'certificate authorities',
        why: 'a certificate (keyless)',
      },
      {
        root: requirements.sct ? ctRoot : undefined,
        count: trust.ctlogs.length,
        what: 'CT logs',
        why: 'an SCT (set insecureIgnoreSCT to skip)',
      },
      {
        root: tlogRoot,
        count: trust.tlogs.length,
        what: 'transparency logs',
        // A root without logs (GitHub's) dates certificates with RFC 3161 timestamps instead.
        why: 'a log entry (to rely on RFC 3161 timestamps instead, set rfc3161timestamp)',
      },
      {
        root: requirements.timestampAuthority ? tsaRoot : undefined,
        count: trust.timestampAuthorities.length,
        what: 'timestamp authorities',
        why: 'an RFC 3161 timestamp',
      },
    ];
    const empty = parts.find((part) => part.root !== undefined && part.count === 0);
    return empty === undefined ? Object.freeze(trust) : incomplete(empty);
  } catch (error) {
    if (!(error instanceof TrustRootError)) throw error;
    const code = error.code === 'TRUST_ROOT_NOT_FETCHED' ? 'NOT_FETCHED' : 'TRUST_ROOT_UNAVAILABLE';
    return new SignatureCheckError(code, error.message, { cause: error });
  }
}

/** One kind of trust material an authority needs, and the trust root it comes from (if needed). */
interface TrustPart {
  readonly root: CompiledTrustRoot | undefined;
  readonly count: number;
  readonly what: string;
  readonly why: string;
}

/** A required kind of evidence with nothing to verify it against can never pass: say so up front. */
function incomplete(part: TrustPart): SignatureCheckError {
  return new SignatureCheckError(
    'TRUST_ROOT_UNAVAILABLE',
    `TrustRoot ${JSON.stringify(part.root?.name)} has no ${part.what}, and the authority requires ${part.why}`,
  );
}

/** A `ca-cert` acts as the certificate authority of a synthetic trust root. */
function caMaterial(certificates: Buffer[]): Trust['certificateAuthorities'] {
  return toTrustMaterial({
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    certificateAuthorities: [
      {
        subject: undefined,
        uri: '',
        certChain: { certificates: certificates.map((rawBytes) => ({ rawBytes })) },
        validFor: { start: new Date(0) },
        operator: '',
      },
    ],
    tlogs: [],
    ctlogs: [],
    timestampAuthorities: [],
  }).certificateAuthorities;
}
