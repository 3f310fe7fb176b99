// Verifies one image against the compiled policies that match it: resolve the digest, find what
// is stored next to it (once per distinct discovery, shared by every authority that asks), verify
// each policy, and reuse passes from the cache. The results are @signet/core's `PolicyResult`s,
// which core joins with its own records of the policies (`checkedVerdict`) into a verdict.
import type { ImageReference, VerificationFailure } from '@signet/core';
import type { CredentialSource, DigestRef, Manifest, RegistryCall } from '@signet/registry';
import {
  ArtifactDiscovery,
  type DiscoveryLimits,
  fetchConfigFiles,
  RegistryClient,
  RegistryError,
} from '@signet/registry';
import { type CacheResult, VerificationCache, WaitDeadlineError } from './cache.js';
import { verifyIndexed } from './image-index.js';
import type { PassRecords } from './pass-records.js';
import type { CompiledAuthorities } from './policy/compile.js';
import type { PolicyCheck, SpecPolicyInputs } from './policy/verify-policy.js';
import { SignatureCheckError } from './sigstore/errors.js';
import { TagCache } from './tag-cache.js';
import { verifyAtDigest } from './verify-at-digest.js';

export interface ImageToVerify {
  readonly reference: ImageReference;
  /** Every policy the image must pass (all of them), as `compileAuthorities` returned them. */
  readonly policies: readonly CompiledAuthorities[];
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
  /** The digest that was verified; `undefined` when it could not be resolved. */
  readonly digest: string | undefined;
  /**
   * One per policy of `ImageToVerify.policies`, in that order, with per-authority details (signer,
   * counts, rejected artifacts) for logs.
   */
  readonly checks: readonly PolicyCheck[];
}

export interface ImageVerifierOptions {
  /** The process-wide client (connections, token cache); credentials are added per request. */
  readonly registry?: RegistryClient;
  readonly cache?: VerificationCache<PolicyCheck>;
  readonly discoveryLimits?: Partial<DiscoveryLimits>;
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
    // Tag resolutions are reused for 30 s (`TagCache`).
    this.#tags = new TagCache({ now: this.#now });
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
      return { digest: undefined, checks };
    }
    const { registry, repository } = image.reference;
    const target: DigestRef = { registry, repository, digest };
    const client = this.#registry.withCredentials(options.credentials);
    // Each distinct registry read once for the image, whichever policies and authorities ask;
    // made on the first read (a verification answered from the cache reads nothing).
    let shared: ArtifactDiscovery | undefined;
    const discovery = () => {
      shared ??= new ArtifactDiscovery(client, this.#options.discoveryLimits);
      return shared;
    };
    // Read once per image, for the policies whose spec.policy asks for them (fetchConfigFile).
    let configs: Promise<Record<string, unknown>> | undefined;
    const configFiles = (call: RegistryCall) => {
      configs ??= fetchConfigFiles(client, target, call);
      return configs;
    };
    // Read once per image, for the policies that judge an index by its platforms.
    let manifest: Promise<Manifest> | undefined;
    const readManifest = (call: RegistryCall) => {
      manifest ??= client.getManifest(target, target.digest, call).then((fetched) => fetched.manifest);
      return manifest;
    };
    const checks = await Promise.all(
      image.policies.map((policy) =>
        this.#checkPolicy(
          policy,
          target,
          { discovery, configFiles, manifest: readManifest },
          options,
          started,
        ),
      ),
    );
    return { digest, checks };
  }

  #checkPolicy(
    policy: CompiledAuthorities,
    target: DigestRef,
    reads: ImageReads,
    options: VerifyOptions,
    started: number,
  ): Promise<PolicyCheck> {
    // The work runs under `call`: this request's, or (shared) that of the request that started it.
    const compute = async (call: RegistryCall): Promise<PolicyCheck> => {
      let inputs = options.specInputs;
      if (policy.specPolicy?.fetchConfigFile) {
        try {
          inputs = { ...inputs, config: await reads.configFiles(call) };
        } catch (error) {
          return failedCheck(
            policy,
            this.#registryFailure('cannot read the image config files', error, options, started),
          );
        }
      }
      const digestReads = {
        discovery: reads.discovery(),
        call,
        inputs,
        unreadable: (error: unknown) => this.#unreadable(error, options, started),
      };
      return verifyIndexed(policy, {
        digest: target.digest,
        manifest: () => reads.manifest(call),
        verifyAt: (digest) => verifyAtDigest(policy, { ...target, digest }, digestReads),
        unreadable: (error) => this.#registryFailure('cannot read the image index', error, options, started),
      });
    };
    const own: RegistryCall = { signal: options.signal, deadline: options.deadline };
    if (!cacheable(policy)) return compute(own);
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

  /** Why an authority fails at admission when the registry could not be asked for its artifacts. */
  #unreadable(error: unknown, options: VerifyOptions, started: number): SignatureCheckError {
    const failure = this.#registryFailure(
      'cannot read signatures from the registry',
      error,
      options,
      started,
    );
    return new SignatureCheckError('REGISTRY_UNAVAILABLE', failure.reason, { cause: failure.cause });
  }

  /** A registry read that failed, as an infrastructure failure; a registry's error is counted. */
  #registryFailure(
    reason: string,
    error: unknown,
    options: VerifyOptions,
    started: number,
  ): VerificationFailure {
    if (error instanceof RegistryError) this.#options.onRegistryError?.(error);
    return infrastructure(reason, error, options, started);
  }
}

/** What one image's verification reads from the registry, shared by its policies. */
interface ImageReads {
  readonly discovery: () => ArtifactDiscovery;
  readonly configFiles: (call: RegistryCall) => Promise<Record<string, unknown>>;
  readonly manifest: (call: RegistryCall) => Promise<Manifest>;
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

function failedCheck(policy: CompiledAuthorities, failure: VerificationFailure): PolicyCheck {
  return { policy: policy.policy, passed: false, failure, authorities: [] };
}
