import {
  type AdmissionDecision,
  checkedVerdict,
  decideAdmission,
  type Exemption,
  type ImageCheck,
  type ImageVerdict,
  matchSubjectOf,
  mutatingResponse,
  type PlanOptions,
  summarizeAdmission,
  type VerifyDecision,
  validatingResponse,
} from '@signet/core';
import type { AdmissionRequest } from '@signet/k8s-types';
import type { CredentialSource } from '@signet/registry';
import type { ImageVerification, ImageVerifier, VerifyOptions } from '@signet/verifier';
import type { Endpoint, ReviewContext, ReviewOutcome, VerifiedImage } from '../http/review.js';
import type { Logger } from '../logger.js';
import type { SignetMetrics } from '../metrics.js';
import type { PolicySnapshot, PolicyStore, SnapshotPolicy } from '../policy/policy-store.js';
import { type GraceRecords, withGrace } from './grace.js';
import { ConcurrencyLimit } from './limit.js';
import { admissionCredentials, type PullSecretLookup } from './pull-secret-keychain.js';

export interface AdmissionServiceOptions {
  readonly store: PolicyStore;
  readonly verifier: ImageVerifier;
  readonly logger: Logger;
  readonly metrics: SignetMetrics;
  /** Reads pull secrets and ServiceAccounts; absent when policies come from files. */
  readonly pullSecrets?: PullSecretLookup;
  /** Pin verified images to digests on the mutating endpoint (default true). */
  readonly resolveDigests?: boolean;
  /** Credentials for every request when there are no pull secrets to read (`signet verify`). */
  readonly credentials?: CredentialSource;
  /** Let Pods run tags (verified by the digest they point at now, with a warning); default false. */
  readonly allowUnpinnedTags?: boolean;
  /** Images verified (or tags resolved) at once (default 128); more wait, within their deadline. */
  readonly maxConcurrentVerifications?: number;
  /** Verifications that may wait for a slot (default 1024); beyond, they fail as infrastructure. */
  readonly maxQueuedVerifications?: number;
  /** Told why a tag could not be pinned (`signet verify` says it; the server logs it). */
  readonly onUnresolvedTag?: (image: string, error: unknown) => void;
  /** Milliseconds since the epoch: which ImagePolicyExceptions are valid, how old a record is (default `Date.now`). */
  readonly now?: () => number;
  /**
   * Told the exceptions an admitted request used (never for a dry run, which the background audit's
   * and `signet verify`'s requests are): the server records Events.
   */
  readonly onExceptionUses?: (request: AdmissionRequest, uses: readonly ExceptionUse[]) => void;
  /**
   * Verification records that may admit an image verification could not check now
   * (stale-if-error); none: every infrastructure failure denies in enforce mode.
   */
  readonly grace?: GraceRecords;
}

/** One policy an ImagePolicyException took off one image of a request. */
export interface ExceptionUse {
  readonly image: string;
  readonly path: string;
  readonly exemption: Exemption;
}

const NOT_READY: ReviewOutcome = {
  response: {
    allowed: false,
    status: { code: 503, reason: 'ServiceUnavailable', message: 'Signet has not loaded its policies yet' },
  },
  decision: 'denied',
  rule: 'infrastructure',
  reason: 'policies not loaded',
};

type Checks = readonly ImageCheck<SnapshotPolicy>[];

/** One review on its way to an answer: what was asked, decided and planned, and with what. */
interface Pending {
  readonly request: AdmissionRequest;
  readonly decision: AdmissionDecision;
  readonly checks: Checks;
  readonly credentials: CredentialSource | undefined;
  readonly context: ReviewContext;
}

/**
 * The admission pipeline: the contract's decision (core), then only for what it says must be
 * verified, policy matching (core) and verification (verifier), then the answer (core). Admitted
 * requests take the same path with nothing to check, and never reach a registry.
 */
export class AdmissionService {
  readonly #store: PolicyStore;
  readonly #verifier: ImageVerifier;
  readonly #logger: Logger;
  readonly #metrics: SignetMetrics;
  readonly #pullSecrets: PullSecretLookup | undefined;
  readonly #resolveDigests: boolean;
  readonly #credentials: CredentialSource | undefined;
  readonly #plan: PlanOptions;
  readonly #limit: ConcurrencyLimit;
  readonly #onUnresolvedTag: ((image: string, error: unknown) => void) | undefined;
  readonly #now: () => number;
  readonly #onExceptionUses: AdmissionServiceOptions['onExceptionUses'];
  readonly #grace: GraceRecords | undefined;
  /** Decisions `quick` made and left to `review`, for as long as their request object lives. */
  readonly #decided = new WeakMap<AdmissionRequest, AdmissionDecision>();

  constructor(options: AdmissionServiceOptions) {
    this.#store = options.store;
    this.#verifier = options.verifier;
    this.#logger = options.logger;
    this.#metrics = options.metrics;
    this.#pullSecrets = options.pullSecrets;
    this.#resolveDigests = options.resolveDigests ?? true;
    this.#credentials = options.credentials;
    this.#plan = { allowUnpinnedTags: options.allowUnpinnedTags === true };
    this.#onUnresolvedTag = options.onUnresolvedTag;
    this.#now = options.now ?? Date.now;
    this.#onExceptionUses = options.onExceptionUses;
    this.#grace = options.grace;
    this.#limit = new ConcurrencyLimit(
      options.maxConcurrentVerifications ?? 128,
      options.maxQueuedVerifications ?? 1024,
    );
  }

  /**
   * Answers at once, without a deadline, a signal or a promise, what needs no verification (a
   * scale-down, status, metadata, a delete, a denial the contract settles by itself): the HTTP
   * layer's `QuickHandler`. `undefined` when the request needs verification: then `review`.
   */
  readonly quick = (endpoint: Endpoint, request: AdmissionRequest): ReviewOutcome | undefined => {
    const decision = this.#decide(request);
    if (decision.action !== 'verify') return this.#settled(endpoint, decision);
    // `review` answers it next: it takes this decision instead of making it again.
    this.#decided.set(request, decision);
    return undefined;
  };

  /** Answers one review for `endpoint`; the HTTP layer's `ReviewHandler`. */
  readonly review = async (
    endpoint: Endpoint,
    request: AdmissionRequest,
    context: ReviewContext,
  ): Promise<ReviewOutcome> => {
    const decision = this.#decided.get(request) ?? this.#decide(request);
    // What starts no container (a scale-down, status, metadata, a delete) needs no policy, so it is
    // answered while policies are still loading (a restart must not stall the cluster's upkeep);
    // anything that needs verification waits for them.
    if (decision.action !== 'verify') return this.#settled(endpoint, decision);
    const snapshot = this.#store.current;
    if (snapshot === undefined) return NOT_READY;
    const checks = this.#checksFor(snapshot, decision, request, endpoint);
    const credentials =
      (await admissionCredentials(this.#pullSecrets, request, checks, this.#logger)) ?? this.#credentials;
    const pending: Pending = { request, decision, checks, credentials, context };
    return endpoint === 'mutate' ? this.#mutate(pending) : this.#validate(pending);
  };

  #decide(request: AdmissionRequest): AdmissionDecision {
    return decideAdmission(request, { resolveDigests: this.#resolveDigests });
  }

  /** The answer to a decision with nothing to verify: no policy, registry or credentials involved. */
  #settled(endpoint: Endpoint, decision: AdmissionDecision): ReviewOutcome {
    return endpoint === 'mutate'
      ? { response: mutatingResponse(decision, new Map()), decision: 'allowed', rule: decision.rule }
      : this.#conclude(decision, []);
  }

  #checksFor(
    snapshot: PolicySnapshot,
    decision: VerifyDecision,
    request: AdmissionRequest,
    endpoint: Endpoint,
  ): Checks {
    // Pinning tags is the mutating endpoint's job; refusing unpinned ones is the validating one's.
    // Exceptions are valid or not as of this review: an expired one stops applying at once.
    const plan = endpoint === 'mutate' ? { allowUnpinnedTags: true } : this.#plan;
    return snapshot.checksFor(decision, matchSubjectOf(request), { ...plan, now: this.#now() });
  }

  async #validate({ request, decision, checks, credentials, context }: Pending): Promise<ReviewOutcome> {
    const results = await Promise.all(
      checks.map((check) =>
        check.kind === 'settled' ? check.verdict : this.#verify(check, request, credentials, context),
      ),
    );
    const outcome = this.#conclude(decision, results);
    this.#recordExemptions(request, outcome);
    return outcome;
  }

  /**
   * Each policy an exception took off an image: logged with the exception's reason; when the
   * request is a real write (not a dry run: the background audit's, `kubectl --dry-run=server`),
   * counted, and told to `onExceptionUses` if the request was admitted.
   */
  #recordExemptions(request: AdmissionRequest, outcome: ReviewOutcome): void {
    const { exceptionUses, namespaceLabel, exceptionLabel } = this.#metrics;
    const real = request.dryRun !== true;
    const uses: ExceptionUse[] = [];
    for (const verdict of outcome.verdicts ?? []) {
      for (const exemption of verdict.exemptions ?? []) {
        const [namespace = '', name = ''] = exemption.exception.split('/');
        if (real) {
          exceptionUses.inc({
            namespace: namespaceLabel.value(namespace),
            exception: exceptionLabel.value(name),
          });
          uses.push({ image: verdict.image, path: verdict.path, exemption });
        }
        this.#logger[real ? 'info' : 'debug'](
          {
            uid: request.uid,
            namespace: request.namespace,
            object: request.name,
            dryRun: request.dryRun === true,
            image: verdict.image,
            path: verdict.path,
            policy: exemption.policy,
            exception: exemption.exception,
            expires: exemption.expires,
            reason: exemption.reason,
            decision: outcome.decision,
          },
          'policy not applied: exempted by an ImagePolicyException',
        );
      }
    }
    if (uses.length > 0 && outcome.decision !== 'denied') this.#onExceptionUses?.(request, uses);
  }

  /** The validating answer to a decision, given what its checks found. */
  #conclude(decision: AdmissionDecision, results: readonly (VerifiedImage | ImageVerdict)[]): ReviewOutcome {
    const verifications = results.filter((r): r is VerifiedImage => 'checks' in r);
    const verdicts = results.map((r) => ('checks' in r ? r.verdict : r));
    const outcome = summarizeAdmission(decision, verdicts);
    const response = validatingResponse(outcome);
    const details = {
      ...(verifications.length > 0 ? { verifications } : {}),
      ...(verdicts.length > 0 ? { verdicts } : {}),
    };
    this.#countPolicyResults(verifications);
    const warned = outcome.warnings.length > 0;
    // A denial that also warns (a warn-mode policy failed beside an enforcing one) logs both.
    const warnings = warned ? { warnings: outcome.warnings } : {};
    if (!outcome.allowed) {
      const denied = outcome.failures.filter((f) => f.denied);
      const failed = denied.some((f) => f.kind === 'infrastructure') ? 'infrastructure' : 'policy';
      const rule = decision.action === 'deny' ? decision.rule : failed;
      return {
        response,
        decision: 'denied',
        rule,
        reason: outcome.denials.join(' | '),
        ...warnings,
        ...details,
      };
    }
    return {
      response,
      decision: warned ? 'warned' : 'allowed',
      rule: decision.rule,
      ...(warned ? { reason: outcome.warnings.join(' | ') } : {}),
      ...warnings,
      ...details,
    };
  }

  /** One count per image and policy: pass, fail (a policy failure) or error (infrastructure). */
  #countPolicyResults(verifications: readonly VerifiedImage[]): void {
    const { policyResults, policyLabel } = this.#metrics;
    for (const verification of verifications) {
      for (const check of verification.checks) {
        const result = check.passed ? 'pass' : check.failure.kind === 'policy' ? 'fail' : 'error';
        policyResults.inc({ policy: policyLabel.value(check.policy), result });
      }
    }
  }

  async #verify(
    check: ImageCheck<SnapshotPolicy> & { readonly kind: 'verify' },
    request: AdmissionRequest,
    credentials: CredentialSource | undefined,
    context: ReviewContext,
  ): Promise<VerifiedImage> {
    const object = request.object ?? {};
    const stop = this.#metrics.verificationDuration.startTimer();
    const verify = () =>
      this.#verifier.verifyImage(
        { reference: check.reference, policies: check.policies.map((policy) => policy.compiled) },
        {
          ...callOptions(context, credentials),
          specInputs: {
            spec: object.spec,
            metadata: object.metadata,
            typemeta: { apiVersion: object.apiVersion, kind: object.kind },
          },
        },
      );
    const result = await this.#limit
      .run(verify, context.signal)
      .catch((error: unknown) => unverified(check, error));
    const failure = result.checks.flatMap((c) => (c.passed ? [] : [c.failure.kind]))[0];
    stop({ result: failure ?? 'pass' });
    // Core joins the verifier's results with the policies' records (their mode) into a verdict,
    // with the plan's notes (exceptions used).
    const checked: VerifiedImage = { ...result, verdict: checkedVerdict(check, result.checks) };
    // Stale-if-error: a record may stand in for what the registry could not answer now.
    return this.#grace === undefined ? checked : withGrace(checked, check, this.#grace, request, this.#now());
  }

  /** Pins planned image fields to the digests their tags point at now; the validating call verifies. */
  async #mutate({ request, decision, checks, credentials, context }: Pending): Promise<ReviewOutcome> {
    const digests = new Map<string, string>();
    const planned = new Set(decision.action === 'verify' ? decision.mutations.map((m) => m.path) : []);
    await Promise.all(
      checks.map(async (check) => {
        // Only images some policy verifies are pinned: others are not Signet's business.
        if (check.kind !== 'verify' || !planned.has(check.target.path)) return;
        try {
          const digest = await this.#verifier.resolveDigest(
            check.reference,
            callOptions(context, credentials),
          );
          digests.set(check.target.path, digest);
        } catch (error) {
          // Not pinned: the validating endpoint resolves again and denies if it must.
          this.#logger.warn(
            { uid: request.uid, image: check.target.image, err: error },
            'cannot resolve a tag to pin it',
          );
          this.#onUnresolvedTag?.(check.target.image, error);
        }
      }),
    );
    const response = mutatingResponse(decision, digests);
    return { response, decision: 'allowed', rule: digests.size > 0 ? 'pinned-digests' : decision.rule };
  }
}

/** The verifier's options for one review: its deadline and signal, and the namespace's credentials. */
function callOptions(context: ReviewContext, credentials: CredentialSource | undefined): VerifyOptions {
  return { signal: context.signal, deadline: context.deadline, ...(credentials ? { credentials } : {}) };
}

/** The verification of an image that never got to run (too much verification work waiting). */
function unverified(
  check: ImageCheck<SnapshotPolicy> & { readonly kind: 'verify' },
  error: unknown,
): ImageVerification {
  const reason = error instanceof Error ? error.message : String(error);
  const checks = check.policies.map((policy) => ({
    policy: policy.name,
    passed: false as const,
    failure: { kind: 'infrastructure' as const, reason, code: 'VERIFIER_ERROR' as const },
    authorities: [],
  }));
  return { digest: undefined, checks };
}
