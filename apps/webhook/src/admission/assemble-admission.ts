// The one way an admission is put together (a policy store, the verifier with its registry client
// and cache, the admission service), for `signet serve`, `signet verify` and `signet audit` alike;
// and for the two commands that judge once, the admission with their policies installed.
import {
  type CredentialSource,
  createCloudProviders,
  type FetchFunction,
  RegistryClient,
  type RegistryError,
} from '@signet/registry';
import { ImageVerifier, type PassRecords, type SignatureFormats, VerificationCache } from '@signet/verifier';
import type { RegistrySettings } from '../config.js';
import { InputError } from '../errors.js';
import { ReviewTimeout } from '../http/review.js';
import type { Logger } from '../logger.js';
import type { SignetMetrics } from '../metrics.js';
import { kmsKeyStore, remotePolicies, remoteTrustRoots } from '../outbound.js';
import { policyApplier } from '../policy/policy-applier.js';
import type { WebhookPolicyEngines } from '../policy/policy-engines.js';
import type { PolicyObjects, PolicyProblem } from '../policy/policy-objects.js';
import { PolicyStore } from '../policy/policy-store.js';
import { AdmissionService, type AdmissionServiceOptions } from './admission-service.js';
import type { GraceRecords } from './grace.js';
import type { PullSecretLookup } from './pull-secret-keychain.js';

/** What admission needs, without servers: `signet serve` puts it behind HTTPS, `signet verify` calls it. */
export interface Admission {
  readonly store: PolicyStore;
  readonly verifier: ImageVerifier;
  readonly service: AdmissionService;
}

export interface AdmissionSettings {
  readonly logger: Logger;
  readonly metrics: SignetMetrics;
  readonly insecureRegistries: readonly string[];
  /** CA certificates and cloud credentials (insecure hosts come from `insecureRegistries`). */
  readonly registries?: Omit<RegistrySettings, 'insecureRegistries'>;
  /** Wraps the registry requests (`signet verify` reports slow ones). */
  readonly registryFetch?: FetchFunction;
  readonly cacheTtlMs?: number;
  readonly resolveDigests: boolean;
  readonly allowUnpinnedTags?: boolean;
  readonly pullSecrets?: PullSecretLookup;
  /** Credentials for every request when there are no pull secrets to read (`signet verify`). */
  readonly credentials?: CredentialSource;
  /** Told why a tag could not be pinned (`signet verify` prints it). */
  readonly onUnresolvedTag?: (image: string, error: unknown) => void;
  /** Told the exceptions each admitted request used (the server records Events). */
  readonly onExceptionUses?: AdmissionServiceOptions['onExceptionUses'];
  /** Verification records: passes shared with other replicas, and stale-if-error. */
  readonly records?: { readonly passes?: PassRecords; readonly grace?: GraceRecords } | undefined;
}

/** An admission with an empty policy store: policies are installed as they are compiled. */
export function assembleAdmission(settings: AdmissionSettings): Admission {
  const { logger, metrics } = settings;
  const store = new PolicyStore();
  const verifier = new ImageVerifier({
    registry: new RegistryClient({
      insecureHosts: settings.insecureRegistries,
      privateHosts: settings.registries?.privateHosts ?? [],
      caCertificates: settings.registries?.caCertificates ?? [],
      credentialProviders: createCloudProviders(settings.registries?.cloudCredentials ?? []),
      ...(settings.registryFetch ? { fetch: settings.registryFetch } : {}),
    }),
    cache: new VerificationCache(settings.cacheTtlMs === undefined ? {} : { ttlMs: settings.cacheTtlMs }),
    onCache: (result) => metrics.cacheLookups.inc({ result }),
    onRegistryError: (error) => metrics.registryErrors.inc({ class: registryErrorClass(error) }),
    ...(settings.records?.passes ? { records: settings.records.passes } : {}),
  });
  const service = new AdmissionService({
    store,
    verifier,
    logger,
    metrics,
    resolveDigests: settings.resolveDigests,
    allowUnpinnedTags: settings.allowUnpinnedTags === true,
    ...(settings.pullSecrets ? { pullSecrets: settings.pullSecrets } : {}),
    ...(settings.credentials ? { credentials: settings.credentials } : {}),
    ...(settings.onUnresolvedTag ? { onUnresolvedTag: settings.onUnresolvedTag } : {}),
    ...(settings.onExceptionUses ? { onExceptionUses: settings.onExceptionUses } : {}),
    ...(settings.records?.grace ? { grace: settings.records.grace } : {}),
  });
  return { store, verifier, service };
}

export interface OneShotSettings extends AdmissionSettings {
  readonly registries: RegistrySettings;
  /** Signet's namespace: `secretRef`s without a namespace are read here. */
  readonly namespace: string;
  /** The longest an ImagePolicyException may live (`--exception-max-lifetime`); core's default without it. */
  readonly maxExceptionLifetimeMs?: number;
  /** What an authority without `signatureFormat` reads (`--signature-format-default`); both formats without it. */
  readonly formats?: SignatureFormats;
  /** CUE and Rego, loaded on the first such policy; the caller closes them when done. */
  readonly engines: WebhookPolicyEngines;
  /** Told each problem with a policy object (a set may be usable with some problems). */
  readonly onProblem: (problem: PolicyProblem) => void;
}

/**
 * The admission of `signet verify` and `signet audit`: `objects` compiled once, through the applier
 * `signet serve` uses, and installed. KMS keys, remote policies and `remote` TrustRoots are fetched
 * once, with the SDKs' default credentials and under the operator's allowances, as `signet serve`
 * fetches them. A set that cannot be used at all is an InputError.
 */
export async function oneShotAdmission(
  objects: PolicyObjects,
  settings: OneShotSettings,
): Promise<Admission> {
  const admission = assembleAdmission(settings);
  const { registries } = settings;
  const apply = policyApplier({
    store: admission.store,
    compile: {
      namespace: settings.namespace,
      ...(settings.maxExceptionLifetimeMs === undefined
        ? {}
        : { maxExceptionLifetimeMs: settings.maxExceptionLifetimeMs }),
      ...(settings.formats ? { formats: settings.formats } : {}),
      fetchRemotePolicy: remotePolicies(registries),
      kmsKeys: kmsKeyStore(registries),
      remoteRoots: remoteTrustRoots(registries),
    },
    logger: settings.logger,
    metrics: settings.metrics,
    engines: settings.engines,
    retryPassing: false,
    onProblem: settings.onProblem,
  });
  await apply(objects);
  if (admission.store.current === undefined)
    throw new InputError('the policies cannot be used (see the warnings above)');
  return admission;
}

/**
 * The `class` label of a registry error: its code, except that a review's own deadline cutting a
 * call short is a timeout (the verifier sees it as its signal aborting), and any other abort (the
 * review was answered first) is `cancelled`. Codes are a closed set, so the label is bounded.
 */
export function registryErrorClass(error: RegistryError): string {
  if (error.code !== 'ABORTED') return error.code.toLowerCase();
  return error.cause instanceof ReviewTimeout ? 'timeout' : 'cancelled';
}
