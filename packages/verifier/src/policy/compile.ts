// Compiles a ClusterImagePolicy's authorities once, when the policy (or a Secret or TrustRoot it
// uses) changes: keys parsed, identities' regular expressions and CEL policies compiled, trust
// material assembled from the trust roots each authority selects. Admission-time work is then
// pure and synchronous (see verify-authority.ts).
//
// Which evidence an authority requires is decided here, from the policy alone (see
// `requirementsOf`): never by what a signature happens to carry.
import { randomUUID } from 'node:crypto';
import { parseReference } from '@signet/core';
import type {
  Attestation,
  Authority,
  ClusterImagePolicy,
  KeylessRef,
  Policy,
  Source,
} from '@signet/k8s-types';
import type { RepositoryRef } from '@signet/registry';
import { SIGNATURE_FORMATS, type SignatureFormat, type SignatureFormats } from '../formats/index.js';
import { SignatureCheckError } from '../sigstore/errors.js';
import { type CompiledIdentity, compileIdentity } from '../sigstore/identity.js';
import type { Requirements, SignatureCheck, SignerPolicy } from '../sigstore/verify.js';
import { type TrustRootResolver, trustRootResolver } from '../trust/compile.js';
import type { CelHost } from './cel-host.js';
import type { PolicyEngineHost, RemotePolicyFetch } from './engines.js';
import { PolicyCompileError, type PolicySite } from './errors.js';
import { type IndexSignatures, indexSignaturesOf } from './index-signatures.js';
import {
  compileCertificates,
  compileKeys,
  type FetchedKmsKey,
  type KeyRefContext,
  type SecretLookup,
} from './keys.js';
import type { KmsKeySource } from './kms-keys.js';
import { predicateTypeURI } from './predicate-types.js';
import {
  type ConfigMapLookup,
  compilePolicyProgram,
  type PolicyProgram,
  type ProgramContext,
} from './programs.js';
import { trustFor } from './trust-selection.js';

export interface CompileContext {
  /** Trust roots by `trustRootRef` (and the public-good root); the embedded public-good root only by default. */
  readonly trustRoots?: TrustRootResolver;
  /** Secrets for `key.secretRef` and `ca-cert.secretRef`. Without it, those authorities fail as unavailable. */
  readonly lookupSecret?: SecretLookup;
  /** Namespace of a `secretRef`/`configMapRef` without one: policy-controller's own (default `cosign-system`). */
  readonly systemNamespace?: string;
  /** ConfigMaps for `policy.configMapRef`. Without it, such policies are refused at compile time. */
  readonly lookupConfigMap?: ConfigMapLookup;
  /** The CUE and Rego engines (`@signet/policy-engines`). Without them, such policies are refused at compile time. */
  readonly engines?: PolicyEngineHost;
  /** Fetches `policy.remote` (pinned by `sha256sum`). Without it, remote policies are refused at compile time. */
  readonly fetchRemotePolicy?: RemotePolicyFetch;
  /** Public keys for `key.kms` (a `KmsKeyStore`). Without it, KMS authorities are refused. */
  readonly kmsKeys?: KmsKeySource;
  /**
   * Where CEL policies are compiled and evaluated (`CelWorkers`, off the event loop). Without it,
   * on the calling thread, under the same cost limit.
   */
  readonly cel?: CelHost;
  /**
   * Compile without any network I/O: a `key.kms` URI, a `policy.remote` URL (and the `remote`
   * TrustRoots, through the resolver's own `offline`) are checked for form only and never
   * fetched. Such an authority is `unavailable` with `NOT_FETCHED`, such a policy program never
   * judges: an offline compile says whether a policy can compile, for apply-time validation, and
   * is never enforced.
   */
  readonly offline?: boolean;
  /** policy-controller's `enable-oci11` (its ConfigMap's switch): legacy-format authorities also read OCI 1.1 referrers. */
  readonly enableOCI11?: boolean;
  /** The signature formats authorities choose from, and hints look in (default `SIGNATURE_FORMATS`). */
  readonly formats?: SignatureFormats;
  /**
   * The compiled policy's `revision`, asked once the compile has read everything it reads (Signet
   * fingerprints those reads). Without it, each compile is a revision of its own.
   */
  readonly revision?: () => string;
}

/** Where an authority's signatures are stored (`source[]`); one entry (the image's repository) when none is given. */
export interface AuthoritySource {
  /** `source[].oci`: the signature repository, when not the image's own. */
  readonly signatureRepository: RepositoryRef | undefined;
  /** `source[].tagPrefix` for the legacy `.sig`/`.att` tags. */
  readonly tagPrefix: string | undefined;
  /** `source[].signaturePullSecrets` names, for the caller to resolve in the admitted object's namespace. */
  readonly signaturePullSecrets: readonly string[];
}

export interface CompiledAttestation {
  readonly name: string;
  /** As written in the policy (`slsaprovenance`, or a URI). */
  readonly requested: string;
  /** The predicate type URI that must match the statement's `predicateType`. */
  readonly predicateType: string;
  readonly policy: PolicyProgram | undefined;
}

interface AuthorityBase {
  /** `name`, or `authority-<index>` as upstream defaults it. */
  readonly name: string;
  readonly index: number;
  readonly sources: readonly AuthoritySource[];
  /**
   * policy-controller's `enable-oci11`: the formats an authority reads also look among OCI 1.1
   * referrers where they can (the legacy format: cosign's experimental signature referrers,
   * in-toto attestation referrers).
   */
  readonly oci11Referrers?: boolean;
  /** Wanted attestations; an authority with none verifies signatures instead. */
  readonly attestations: readonly CompiledAttestation[];
}

/**
 * Whether a signer authority can verify: `ready` with what it verifies against, or `unavailable`
 * because a Secret or trust root it needs is missing (every admission fails with the reason).
 */
export type SignerState =
  | { readonly kind: 'ready'; readonly check: SignatureCheck }
  | { readonly kind: 'unavailable'; readonly reason: SignatureCheckError };

export type StaticAuthority = AuthorityBase & {
  readonly type: 'static';
  readonly action: 'pass' | 'fail';
  readonly message: string | undefined;
};

export type SignerAuthority = AuthorityBase & {
  readonly type: 'key' | 'keyless';
  /**
   * The signature formats whose artifacts count (`signatureFormat`, or the defaults), in the order
   * they are read: a format is read only when those before it found nothing that passes.
   */
  readonly formats: readonly SignatureFormat[];
  /** `signatureFormat` as the policy wrote it; `undefined` when the authority reads the defaults. */
  readonly signatureFormat: string | undefined;
  /** Every other registered format: read only to say, on a denial, what the image has there. */
  readonly otherFormats: readonly SignatureFormat[];
  readonly requirements: Requirements;
  readonly state: SignerState;
};

export type CompiledAuthority = StaticAuthority | SignerAuthority;

/** The spec-level `policy` (CEL) and what it asks the caller to provide. */
export interface CompiledSpecPolicy {
  readonly program: PolicyProgram;
  readonly includeSpec: boolean;
  readonly includeObjectMeta: boolean;
  readonly includeTypeMeta: boolean;
  readonly fetchConfigFile: boolean;
}

/**
 * A ClusterImagePolicy's authorities, compiled: what `ImageVerifier` verifies an image against.
 * Immutable. Whether a failure denies (the policy's mode) is the caller's to say, not the verifier's.
 */
export interface CompiledAuthorities {
  /** The ClusterImagePolicy's name (`namespace/name` for an ImagePolicy). */
  readonly policy: string;
  /**
   * The cache key of this policy's passes: changes whenever the policy or anything it was
   * compiled from changes (`CompileContext.revision`; unique to the compile without it).
   */
  readonly revision: string;
  readonly authorities: readonly CompiledAuthority[];
  readonly specPolicy: CompiledSpecPolicy | undefined;
  /**
   * Which signatures a Pod naming an image index needs (annotation `signet.dev/index-signatures`);
   * `index` when absent, as policy-controller: those of the index's own digest.
   */
  readonly indexSignatures?: IndexSignatures;
}

export const DEFAULT_SYSTEM_NAMESPACE = 'cosign-system';

/**
 * Compiles `cip`'s authorities and spec-level policy. Throws {@link PolicyCompileError} when the
 * policy cannot be enforced as written (KMS keys without a key source, bad PEM, regexp, CEL, CUE
 * or Rego; a remote policy that cannot be fetched). A missing Secret, an unreachable KMS (with no
 * earlier key) or an unloadable trust root does not throw: that authority fails at admission with
 * an `infrastructure` failure, and the others still count.
 */
export async function compileAuthorities(
  cip: ClusterImagePolicy,
  context: CompileContext = {},
): Promise<CompiledAuthorities> {
  const policy = cip.metadata.name;
  const indexSignatures = indexSignaturesOf(policy, cip.metadata.annotations);
  const resolver = context.trustRoots ?? trustRootResolver([]);
  const authorities = await Promise.all(
    cip.spec.authorities.map((authority, index) =>
      compileAuthority(policy, authority, index, context, resolver),
    ),
  );
  const specPolicy =
    cip.spec.policy === undefined ? undefined : await compileSpecPolicy(policy, cip.spec.policy, context);
  return Object.freeze({
    policy,
    revision: context.revision?.() ?? `${policy}@${randomUUID()}`,
    authorities: Object.freeze(authorities),
    specPolicy,
    indexSignatures,
  });
}

async function compileAuthority(
  policy: string,
  authority: Authority,
  index: number,
  context: CompileContext,
  resolver: TrustRootResolver,
): Promise<CompiledAuthority> {
  const name = authority.name || `authority-${index}`;
  const site: PolicySite = {
    policy,
    path: `spec.authorities[${index}]`,
    label: `authority ${JSON.stringify(name)}`,
  };
  const base: AuthorityBase = {
    name,
    index,
    sources: compileSources(authority.source ?? [], site),
    oci11Referrers: context.enableOCI11 === true,
    attestations: await Promise.all(
      (authority.attestations ?? []).map((a, i) => compileAttestation(a, site, i, context)),
    ),
  };
  if (authority.static !== undefined) {
    return Object.freeze({
      ...base,
      type: 'static',
      action: authority.static.action,
      message: authority.static.message,
    });
  }
  const formats = formatsOf(authority, site, context);
  const keyContext: KeyRefContext = {
    lookupSecret: context.lookupSecret,
    secretNamespace: context.systemNamespace ?? DEFAULT_SYSTEM_NAMESPACE,
  };
  const kms = await kmsKeyOf(authority, site, context);
  const signer =
    kms instanceof SignatureCheckError ? kms : compileSigner(authority, site, name, keyContext, kms);
  const requirements = requirementsOf(authority);
  const type = authority.key !== undefined ? 'key' : 'keyless';
  const state = await signerState(authority, signer, requirements, resolver);
  return Object.freeze({ ...base, type, ...formats, requirements, state });
}

/** The formats `authority` reads, and the others, from the registered formats. */
function formatsOf(
  authority: Authority,
  site: PolicySite,
  context: CompileContext,
): Pick<SignerAuthority, 'formats' | 'otherFormats' | 'signatureFormat'> {
  const registered = context.formats ?? SIGNATURE_FORMATS;
  const formats = registered.select(authority.signatureFormat);
  if (formats === undefined) {
    const known = registered.all.map((format) => format.name).join(', ');
    throw new PolicyCompileError(
      'UNSUPPORTED_SIGNATURE_FORMAT',
      { ...site, path: `${site.path}.signatureFormat` },
      `${JSON.stringify(authority.signatureFormat)} is not a signature format this verifier reads (${known})`,
    );
  }
  return {
    formats,
    otherFormats: registered.others(formats),
    signatureFormat: authority.signatureFormat,
  };
}

async function signerState(
  authority: Authority,
  signer: CompiledSigner | SignatureCheckError,
  requirements: Requirements,
  resolver: TrustRootResolver,
): Promise<SignerState> {
  if (signer instanceof SignatureCheckError) return { kind: 'unavailable', reason: signer };
  const trust = await trustFor(authority, requirements, signer.caCertificates, resolver);
  if (trust instanceof SignatureCheckError) return { kind: 'unavailable', reason: trust };
  return { kind: 'ready', check: Object.freeze({ signer: signer.policy, requirements, trust }) };
}

/**
 * The threshold rules, as policy-controller's: with `rfc3161timestamp`, an RFC 3161 timestamp and
 * no transparency-log entry (upstream ignores the log then, `ctlog` or not). Otherwise a key
 * authority needs a log entry only with `ctlog` (without it no log is consulted), and a keyless
 * one always. Keyless also needs an SCT unless `insecureIgnoreSCT`.
 */
export function requirementsOf(authority: Authority): Requirements {
  const timestampAuthority = authority.rfc3161timestamp !== undefined;
  const logged = !timestampAuthority && (authority.key === undefined || authority.ctlog !== undefined);
  if (authority.key !== undefined) return { tlog: logged, timestampAuthority, sct: false };
  return { tlog: logged, timestampAuthority, sct: authority.keyless?.insecureIgnoreSCT !== true };
}

interface CompiledSigner {
  readonly policy: SignerPolicy;
  readonly caCertificates: Buffer[] | undefined;
}

/**
 * The KMS key of `key.kms`, from the store (fetched now only when it has none younger than its
 * refresh interval). No key at all is an `unavailable` authority, not a compile error: the KMS
 * may come back, and the next compile picks the key up.
 */
async function kmsKeyOf(
  authority: Authority,
  site: PolicySite,
  context: CompileContext,
): Promise<FetchedKmsKey | SignatureCheckError | undefined> {
  const uri = authority.key?.kms;
  if (uri === undefined || uri === '') return undefined;
  if (context.kmsKeys === undefined) {
    throw new PolicyCompileError(
      'UNSUPPORTED_KMS',
      { ...site, path: `${site.path}.key.kms` },
      `no KMS key source is configured, so ${JSON.stringify(uri)} cannot be fetched`,
    );
  }
  if (context.offline) {
    try {
      context.kmsKeys.checkUri?.(uri);
    } catch (error) {
      throw new PolicyCompileError(
        'UNSUPPORTED_KMS',
        { ...site, path: `${site.path}.key.kms` },
        (error as Error).message,
        {
          cause: error,
        },
      );
    }
    return new SignatureCheckError(
      'NOT_FETCHED',
      `KMS key ${uri}: checked for form only; its public key is fetched when the policy is loaded`,
    );
  }
  const found = await context.kmsKeys.lookup(uri);
  if (found.kind === 'refused') {
    throw new PolicyCompileError(
      'UNSUPPORTED_KMS',
      { ...site, path: `${site.path}.key.kms` },
      found.error.message,
      {
        cause: found.error,
      },
    );
  }
  if (found.kind === 'unavailable') {
    return new SignatureCheckError('KMS_UNAVAILABLE', found.error.message, { cause: found.error });
  }
  return { pem: found.key.pem, hashAlgorithm: found.key.hashAlgorithm };
}

function compileSigner(
  authority: Authority,
  site: PolicySite,
  name: string,
  context: KeyRefContext,
  kms: FetchedKmsKey | undefined,
): CompiledSigner | SignatureCheckError {
  if (authority.key !== undefined) {
    const keySite = { ...site, path: `${site.path}.key`, authority: name };
    const keys = compileKeys(authority.key, keySite, context, kms);
    if (keys instanceof SignatureCheckError) return keys;
    return {
      policy: { type: 'key', keys, hashAlgorithm: authority.key.hashAlgorithm || undefined },
      caCertificates: undefined,
    };
  }
  if (authority.keyless === undefined) {
    throw new PolicyCompileError(
      'INVALID_AUTHORITY',
      site,
      'exactly one of key, keyless or static is required',
    );
  }
  const identities = compileIdentities(authority.keyless, site);
  const caCert = authority.keyless['ca-cert'];
  // A `ca-cert` named by `kms` is policy-controller's accepted no-op: a KMS holds keys, not
  // certificates, upstream never reads one, and its keyless authorities take their CAs from the
  // trust root (keyless.trustRootRef or the default). Signet does the same.
  const caCertificates =
    caCert === undefined || (caCert.kms !== undefined && caCert.kms !== '')
      ? undefined
      : compileCertificates(
          caCert,
          { ...site, path: `${site.path}.keyless.ca-cert`, authority: name },
          context,
        );
  if (caCertificates instanceof SignatureCheckError) return caCertificates;
  return { policy: { type: 'keyless', identities }, caCertificates };
}

function compileIdentities(keyless: KeylessRef, site: PolicySite): CompiledIdentity[] {
  return keyless.identities.map((identity, i) => {
    try {
      return compileIdentity(identity);
    } catch (error) {
      const code = error instanceof SyntaxError ? 'INVALID_REGEXP' : 'INVALID_AUTHORITY';
      throw new PolicyCompileError(
        code,
        { ...site, path: `${site.path}.keyless.identities[${i}]` },
        String(error),
        {
          cause: error,
        },
      );
    }
  });
}

function compileSources(sources: readonly Source[], site: PolicySite): AuthoritySource[] {
  if (sources.length === 0)
    return [{ signatureRepository: undefined, tagPrefix: undefined, signaturePullSecrets: [] }];
  return sources.map((source, i) => ({
    signatureRepository: source.oci
      ? repositoryOf(source.oci, { ...site, path: `${site.path}.source[${i}].oci` })
      : undefined,
    tagPrefix: source.tagPrefix || undefined,
    signaturePullSecrets: (source.signaturePullSecrets ?? []).flatMap((ref) => (ref.name ? [ref.name] : [])),
  }));
}

function repositoryOf(oci: string, site: PolicySite): RepositoryRef {
  let reference: ReturnType<typeof parseReference>;
  try {
    reference = parseReference(oci);
  } catch (error) {
    throw new PolicyCompileError('INVALID_SOURCE', site, `${JSON.stringify(oci)} is not a repository`, {
      cause: error,
    });
  }
  if (reference.tag !== undefined || reference.digest !== undefined) {
    throw new PolicyCompileError(
      'INVALID_SOURCE',
      site,
      `${JSON.stringify(oci)} must name a repository, without tag or digest`,
    );
  }
  return { registry: reference.registry, repository: reference.repository };
}

async function compileAttestation(
  attestation: Attestation,
  site: PolicySite,
  index: number,
  context: CompileContext,
): Promise<CompiledAttestation> {
  const attestationSite: PolicySite = {
    ...site,
    path: `${site.path}.attestations[${index}]`,
    label: `${site.label}, attestation ${JSON.stringify(attestation.name)}`,
  };
  return Object.freeze({
    name: attestation.name,
    requested: attestation.predicateType,
    predicateType: predicateTypeURI(attestation.predicateType),
    policy:
      attestation.policy === undefined
        ? undefined
        : await compilePolicyProgram(
            attestation.policy,
            { ...attestationSite, path: `${attestationSite.path}.policy` },
            programContext(context),
          ),
  });
}

async function compileSpecPolicy(
  policy: string,
  spec: Policy,
  context: CompileContext,
): Promise<CompiledSpecPolicy> {
  const site: PolicySite = { policy, path: 'spec.policy', label: 'policy of the ClusterImagePolicy' };
  return Object.freeze({
    program: await compilePolicyProgram(spec, site, programContext(context)),
    includeSpec: spec.includeSpec === true,
    includeObjectMeta: spec.includeObjectMeta === true,
    includeTypeMeta: spec.includeTypeMeta === true,
    fetchConfigFile: spec.fetchConfigFile === true,
  });
}

function programContext(context: CompileContext): ProgramContext {
  return {
    lookupConfigMap: context.lookupConfigMap,
    systemNamespace: context.systemNamespace ?? DEFAULT_SYSTEM_NAMESPACE,
    engines: context.engines,
    cel: context.cel,
    fetchRemote: context.fetchRemotePolicy,
    offline: context.offline === true,
  };
}
