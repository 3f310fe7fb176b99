// cosign's short names for predicate types (`cosign attest --type`), which policy-controller
// accepts in `attestations[].predicateType`. Anything else is used as the predicate type URI itself.
export const PREDICATE_TYPES: Readonly<Record<string, string>> = Object.freeze({
  custom: 'https://cosign.sigstore.dev/attestation/v1',
  slsaprovenance: 'https://slsa.dev/provenance/v0.2',
  slsaprovenance02: 'https://slsa.dev/provenance/v0.2',
  slsaprovenance1: 'https://slsa.dev/provenance/v1',
  spdx: 'https://spdx.dev/Document',
  spdxjson: 'https://spdx.dev/Document',
  cyclonedx: 'https://cyclonedx.org/bom',
  link: 'https://in-toto.io/Link/v1',
  vuln: 'https://cosign.sigstore.dev/attestation/vuln/v1',
  openvex: 'https://openvex.dev/ns',
});

const BY_NAME: ReadonlyMap<string, string> = new Map(Object.entries(PREDICATE_TYPES));

/** The predicate type URI a policy's `predicateType` stands for. */
export function predicateTypeURI(predicateType: string): string {
  return BY_NAME.get(predicateType) ?? predicateType;
}
