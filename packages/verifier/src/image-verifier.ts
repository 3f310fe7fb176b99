// Verifies one image against the ClusterImagePolicies that match it: resolve the digest, find what
// is stored next to it (once per distinct discovery, shared by every authority that asks), verify
// each policy, and reuse passes from the cache. The result is @signet/core's `ImageVerdict`, which
// core turns into the AdmissionResponse.
import type { ImageReference, ImageVerdict, PolicyVerdict, VerificationFailure } from '@signet/core';
import type { PolicyMode } from '@signet/k8s-types';
import type { DigestRef, DiscoveredArtifact, DiscoveryRequest } from './artifacts.js';
import { type CacheResult, VerificationCache, WaitDeadlineError } from './cache.js';
import type { PassRecords } from './pass-records.js';
import type { CompiledAuthorities, CompiledAuthority } from './policy/compile.js';
import {
  consideredCount,
  discoveryRequests,
  inOtherFormat,
  type OtherFormat,
} from './policy/verify-authority.js';
import { type PolicyCheck, type SpecPolicyInputs, verifyPolicy } from './policy/verify-policy.js';
import { RegistryClient } from './registry/client.js';
import { fetchConfigFiles } from './registry/config-files.js';
import type { RegistryCall } from './registry/deadline.js';
import { type DiscoveryLimits, discoverArtifacts } from './registry/discovery.js';
import { RegistryError } from './registry/errors.js';
import type { CredentialSource } from './registry/keychain.js';
import { SignatureCheckError } from './sigstore/errors.js';
import { TagCache } from './tag-cache.js';

/** One matching ClusterImagePolicy, compiled, as the verifier needs it. */
export interface PolicyToVerify {
  readonly name: string;
  readonly mode: PolicyMode;
  /**
   * Changes whenever the policy or anything it was compiled from changes (uid, generation, the
   * Secrets and TrustRoots it reads): the cache key of its passes.
   */
  readonly revision: string;
  readonly compiled: CompiledAuthorities;
}

export interface ImageToVerify {
  /** Field path of the image in the admitted object. */
  readonly path: string;
  /** The image as written. */
  readonly image: string;
  readonly reference: ImageReference;
  /** Every policy the image must pass (all of them). */
  readonly policies: readonly PolicyToVerify[];
}

export interface VerifyOptions {
  readonly signal: AbortSignal;
  /** Epoch milliseconds by which every registry call must have finished. */
  readonly deadline: number;
  /** Credentials for the admitted object's namespace (pull secrets, signature pull secrets). */
  readonly credentials?: CredentialSource;
  /** The admitted object, for spec-level policies that ask for it (such results are never cached). */
  readonly specInputs?: SpecPolicyInputs;
}

export interface ImageVerification {
  readonly verdict: ImageVerdict;
  /** The digest that was verified; `undefined` when it could not be resolved. */
  readonly digest: string | undefined;
  /** Per policy, with per-authority details (signer, counts, rejected artifacts) for logs. */
  readonly checks: readonly PolicyCheck[];
}

export interface ImageVerifierOptions {
  /** The process-wide client (connections, token cache); credentials are added per request. */
  readonly registry?: RegistryClient;
  readonly cache?: VerificationCache<PolicyCheck>;
  readonly discoveryLimits?: Partial<DiscoveryLimits>;
  /** Reuse of tag resolutions (default 30 s); see `TagCache`. */
  readonly tags?: TagCache;
  /**
   * Passes kept outside this process (Signet's verification records): asked on a miss of the
   * in-memory cache before the registry, and told each pass verified here.
   */
  readonly records?: PassRecords;
  /** Observers for metrics. */
  readonly onCache?: (result: CacheResult) => void;
  readonly onRegistryError?: (error: RegistryError) => void;
  readonly now?: () => number;
}

export class ImageVerifier {
  readonly #registry: RegistryClient;
  readonly #cache: VerificationCache<PolicyCheck>;
  readonly #tags: TagCache;
  readonly #options: ImageVerifierOptions;
  readonly #now: () => number;

  constructor(options: ImageVerifierOptions = {}) {
    this.#options = options;
    this.#registry = options.registry ?? new RegistryClient();
    this.#cache = options.cache ?? new VerificationCache<PolicyCheck>();
    this.#now = options.now ?? Date.now;
    this.#tags = options.tags ?? new TagCache({ now: this.#now });
  }

  /** Resolves a tag to the digest the registry serves now. Throws `RegistryError`. */
  async resolveDigest(reference: ImageReference, options: VerifyOptions): Promise<string> {
    if (reference.digest !== undefined) return reference.digest;
    const client = this.#registry.withCredentials(options.credentials);
    const call: RegistryCall = { signal: options.signal, deadline: options.deadline };
    const { registry, repository } = reference;
    const tag = reference.tag ?? 'latest';
    const resolve = () => client.resolveDigest({ registry, repository, tag }, call);
    const key = `${registry}/${repository}:${tag}`;
    try {
      const { digest, shared } = this.#tags.get(key, resolve);
      try {
        return await digest;
      } catch (error) {
        // Another caller's deadline or cancellation is not this one's: ask again under its own.
        const theirs =
          error instanceof RegistryError && (error.code === 'TIMEOUT' || error.code === 'ABORTED');
        if (shared && theirs && !options.signal.aborted) return await this.#tags.get(key, resolve).digest;
        throw error;
      }
    } catch (error) {
      if (error instanceof RegistryError) this.#options.onRegistryError?.(error);
      throw error;
    }
  }

  /** Verifies the image against each of its policies. Never throws: failures are verdicts. */
  async verifyImage(image: ImageToVerify, options: VerifyOptions): Promise<ImageVerification> {
    const started = this.#now();
    let digest: string;
    try {
      digest = await this.resolveDigest(image.reference, options);
    } catch (error) {
      // A tag or repository that does not exist is an answer about the image, not an outage.
      const failure: VerificationFailure =
        error instanceof RegistryError && error.code === 'NOT_FOUND'
          ? { kind: 'policy', reason: `${image.reference.normalized} does not exist`, cause: error }
          : infrastructure(
              `cannot resolve ${image.reference.normalized} to a digest`,
              error,
              options,
              started,
            );
      const checks = image.policies.map((policy) => failedCheck(policy, failure));
      return { verdict: verdictOf(image, checks), digest: undefined, checks };
    }
    const { registry, repository } = image.reference;
    const target: DigestRef = { registry, repository, digest };
    const client = this.#registry.withCredentials(options.credentials);
    const discoveries = new Map<string, Promise<readonly DiscoveredArtifact[]>>();
    const discover = (request: DiscoveryRequest, call: RegistryCall) => {
      const key = JSON.stringify(request);
      let found = discoveries.get(key);
      if (found === undefined) {
        found = discoverArtifacts(client, request, call, this.#options.discoveryLimits).then(
          // Unusable candidates go on too: the authority reports them among what it rejected.
          (d) => [...d.artifacts, ...d.skipped],
        );
        discoveries.set(key, found);
      }
      return found;
    };
    // Read once per image, for the policies whose spec.policy asks for them (fetchConfigFile).
    let configs: Promise<Record<string, unknown>> | undefined;
    const configFiles = (call: RegistryCall) => {
      configs ??= fetchConfigFiles(client, target, call);
      return configs;
    };
    const checks = await Promise.all(
      image.policies.map((policy) =>
        this.#checkPolicy(policy, target, { discover, configFiles }, options, started),
      ),
    );
    return { verdict: verdictOf(image, checks), digest, checks };
  }

  #checkPolicy(
    policy: PolicyToVerify,
    target: DigestRef,
    reads: ImageReads,
    options: VerifyOptions,
    started: number,
  ): Promise<PolicyCheck> {
    const { discover } = reads;
    // The work runs under `call`: this request's, or (shared) that of the request that started it.
    const compute = async (call: RegistryCall): Promise<PolicyCheck> => {
      let inputs = options.specInputs;
      if (policy.compiled.specPolicy?.fetchConfigFile) {
        try {
          inputs = { ...inputs, config: await reads.configFiles(call) };
        } catch (error) {
          if (error instanceof RegistryError) this.#options.onRegistryError?.(error);
          return failedCheck(
            policy,
            infrastructure('cannot read the image config files', error, options, started),
          );
        }
      }
      const found = new Map<CompiledAuthority, readonly DiscoveredArtifact[] | SignatureCheckError>();
      await Promise.all(
        policy.compiled.authorities.map(async (authority) => {
          try {
            const lists = await Promise.all(
              discoveryRequests(authority, target).map((r) => discover(r, call)),
            );
            found.set(authority, lists.flat());
          } catch (error) {
            found.set(authority, this.#unreadable(error, options, started));
          }
        }),
      );
      const artifactsFor = (a: CompiledAuthority) => found.get(a) ?? [];
      const check = await verifyPolicy(
        policy.compiled,
        target.digest,
        artifactsFor,
        inputs,
        undefined,
        call.signal,
      );
      if (check.passed) return check;
      // Nothing found: look once in the other format, so the denial can say what is there.
      const elsewhere = await this.#elsewhere(policy.compiled, check, target, discover, call);
      if (elsewhere.size === 0) return check;
      return verifyPolicy(
        policy.compiled,
        target.digest,
        artifactsFor,
        inputs,
        (a) => elsewhere.get(a),
        call.signal,
      );
    };
    const own: RegistryCall = { signal: options.signal, deadline: options.deadline };
    if (!cacheable(policy.compiled)) return compute(own);
    const key = `${policy.revision}\u0000${target.registry}/${target.repository}@${target.digest}`;
    // A miss here may be a pass another replica (or this one before a restart) recorded.
    const records = this.#options.records;
    const recorded = new WeakMap<PolicyCheck, number>();
    const computeOrRecorded = async (call: RegistryCall): Promise<PolicyCheck> => {
      const found = records?.find(policy, target);
      if (found?.check.passed) {
        recorded.set(found.check, found.freshForMs);
        return found.check;
      }
      const check = await compute(call);
      if (check.passed) records?.passed(policy, target, check);
      return check;
    };
    // A recorded pass is kept only for what is left of its lifetime.
    const keep = (check: PolicyCheck) => check.passed && (recorded.get(check) ?? true);
    return this.#cache
      .get(key, own, computeOrRecorded, keep, this.#options.onCache)
      .catch((error: unknown) =>
        failedCheck(policy, infrastructure('verification was cancelled', error, options, started)),
      );
  }

  /**
   * For each signer authority that found nothing, how many artifacts the image has in the format
   * it does not read. Only on the way to a denial; a registry failure here just means no hint.
   */
  async #elsewhere(
    compiled: CompiledAuthorities,
    check: PolicyCheck,
    target: DigestRef,
    discover: ImageReads['discover'],
    call: RegistryCall,
  ): Promise<Map<CompiledAuthority, OtherFormat>> {
    const empty = new Set(
      check.authorities.flatMap((a) =>
        !a.passed && a.failure.code === 'NO_SIGNATURES' ? [a.authority] : [],
      ),
    );
    const hints = new Map<CompiledAuthority, OtherFormat>();
    await Promise.all(
      compiled.authorities.map(async (authority) => {
        if (authority.type === 'static' || !empty.has(authority.name)) return;
        const other = inOtherFormat(authority);
        try {
          const lists = await Promise.all(discoveryRequests(other, target).map((r) => discover(r, call)));
          const count = consideredCount(other, lists.flat());
          if (count > 0) hints.set(authority, { format: other.signatureFormat, count });
        } catch {
          // no hint, the denial stays as it was
        }
      }),
    );
    return hints;
  }

  /** Why an authority fails at admission when the registry could not be asked for its artifacts. */
  #unreadable(error: unknown, options: VerifyOptions, started: number): SignatureCheckError {
    if (error instanceof RegistryError) this.#options.onRegistryError?.(error);
    const failure = infrastructure('cannot read signatures from the registry', error, options, started);
    return new SignatureCheckError('REGISTRY_UNAVAILABLE', failure.reason, { cause: failure.cause });
  }
}

/** What one image's verification reads from the registry, shared by its policies. */
interface ImageReads {
  readonly discover: (
    request: DiscoveryRequest,
    call: RegistryCall,
  ) => Promise<readonly DiscoveredArtifact[]>;
  readonly configFiles: (call: RegistryCall) => Promise<Record<string, unknown>>;
}

/** A spec-level policy that reads the admitted object gives per-object results: never shared. */
function cacheable(compiled: CompiledAuthorities): boolean {
  const spec = compiled.specPolicy;
  return spec === undefined || !(spec.includeSpec || spec.includeObjectMeta || spec.includeTypeMeta);
}

function infrastructure(
  reason: string,
  error: unknown,
  options: VerifyOptions,
  started: number,
): VerificationFailure {
  const timedOut =
    options.signal.aborted ||
    error instanceof WaitDeadlineError ||
    (error instanceof RegistryError && (error.code === 'TIMEOUT' || error.code === 'ABORTED'));
  if (timedOut) {
    const seconds = Math.max(0, (options.deadline - started) / 1000).toFixed(1);
    const waitedFor = whatWasWaitedFor(error);
    return {
      kind: 'infrastructure',
      reason: `verification timed out after ${seconds}s`,
      ...(waitedFor === undefined ? {} : { cause: waitedFor }),
    };
  }
  return { kind: 'infrastructure', reason, cause: error };
}

/**
 * For a timeout, the cause worth showing is which call was waiting, not the abort's own "timed
 * out after ..." again: a registry call keeps its message without the abort reason beneath it.
 */
function whatWasWaitedFor(error: unknown): Error | undefined {
  return error instanceof RegistryError ? new Error(error.message) : undefined;
}

function failedCheck(policy: PolicyToVerify, failure: VerificationFailure): PolicyCheck {
  return { policy: policy.name, mode: policy.mode, passed: false, failure, authorities: [] };
}

function verdictOf(image: ImageToVerify, checks: readonly PolicyCheck[]): ImageVerdict {
  const verdicts: PolicyVerdict[] = checks.map((check) => {
    const { authorities: _details, ...verdict } = check;
    return verdict;
  });
  return { path: image.path, image: image.image, outcome: { kind: 'policies', verdicts } };
}
