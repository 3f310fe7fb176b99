import {
  type AdmissionDecision,
  decideAdmission,
  type ImageCheck,
  type ImageVerdict,
  matchSubjectOf,
  mutatingResponse,
  planChecks,
  summarizeAdmission,
  validatingResponse,
} from '@signet/core';
import { type AdmissionRequest, podSpecOf, workloadForKind } from '@signet/k8s-types';
import {
  type CredentialSource,
  credentialsFromSecret,
  type ImageVerifier,
  Keychain,
  type PolicyToVerify,
} from '@signet/verifier';
import type { Endpoint, ReviewContext, ReviewHandler, ReviewOutcome } from './http/admission-app.js';
import type { PullSecretLookup } from './kube/pull-secrets.js';
import type { Logger } from './logger.js';
import type { SignetMetrics } from './metrics.js';
import type { PolicyStore } from './policy/policy-store.js';

export interface AdmissionServiceOptions {
  readonly store: PolicyStore;
  readonly verifier: ImageVerifier;
  readonly logger: Logger;
  readonly metrics: SignetMetrics;
  /** Reads pull secrets and ServiceAccounts; absent when policies come from files. */
  readonly pullSecrets?: PullSecretLookup;
  /** Pin verified images to digests on the mutating endpoint (default true). */
  readonly resolveDigests?: boolean;
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

/**
 * The admission pipeline: the contract's decision (core), then only for what it says must be
 * verified, policy matching (core) and verification (verifier), then the response (core).
 */
export class AdmissionService {
  readonly #o: AdmissionServiceOptions;

  constructor(options: AdmissionServiceOptions) {
    this.#o = options;
  }

  readonly handle: ReviewHandler = async (endpoint, request, context) => {
    const snapshot = this.#o.store.current;
    if (snapshot === undefined) return NOT_READY;
    const decision = decideAdmission(request, { resolveDigests: this.#o.resolveDigests ?? true });
    if (decision.action === 'admit') return this.#admitted(endpoint, request, decision);
    const checks = planChecks(decision, snapshot.set, matchSubjectOf(request));
    const toVerify = (check: ImageCheck & { kind: 'verify' }) =>
      check.policies
        .map((p) => snapshot.verify.get(p.name))
        .filter((p): p is PolicyToVerify => p !== undefined);
    const credentials = await this.#credentials(request, checks, toVerify);
    return endpoint === 'mutate'
      ? this.#mutate(request, decision, checks, credentials, context)
      : this.#validate(request, decision, checks, toVerify, credentials, context);
  };

  #admitted(
    endpoint: Endpoint,
    request: AdmissionRequest,
    decision: AdmissionDecision & { action: 'admit' },
  ): ReviewOutcome {
    if (endpoint === 'mutate')
      return { response: { allowed: true }, decision: 'allowed', rule: decision.rule };
    const { uid: _uid, ...response } = validatingResponse(request.uid, summarizeAdmission(decision, []));
    return {
      response,
      decision: decision.warning === undefined ? 'allowed' : 'warned',
      rule: decision.rule,
      ...(decision.warning === undefined ? {} : { reason: decision.warning }),
    };
  }

  async #validate(
    request: AdmissionRequest,
    decision: AdmissionDecision,
    checks: readonly ImageCheck[],
    toVerify: (check: ImageCheck & { kind: 'verify' }) => PolicyToVerify[],
    credentials: CredentialSource | undefined,
    context: ReviewContext,
  ): Promise<ReviewOutcome> {
    const object = request.object ?? {};
    const specInputs = {
      spec: object.spec,
      metadata: object.metadata,
      typemeta: { apiVersion: object.apiVersion, kind: object.kind },
    };
    const verdicts = await Promise.all(
      checks.map(async (check): Promise<ImageVerdict> => {
        if (check.kind === 'settled') return check.verdict;
        const stop = this.#o.metrics.verificationDuration.startTimer();
        const result = await this.#o.verifier.verifyImage(
          {
            path: check.target.path,
            image: check.target.image,
            reference: check.reference,
            policies: toVerify(check),
          },
          {
            signal: context.signal,
            deadline: context.deadline,
            ...(credentials ? { credentials } : {}),
            specInputs,
          },
        );
        const failure = result.checks.flatMap((c) => (c.passed ? [] : [c.failure.kind]))[0];
        stop({ result: failure ?? 'pass' });
        return result.verdict;
      }),
    );
    const outcome = summarizeAdmission(decision, verdicts);
    const { uid: _uid, ...response } = validatingResponse(request.uid, outcome);
    const denied = outcome.failures.filter((f) => f.denied);
    if (!outcome.allowed) {
      const rule = denied.some((f) => f.kind === 'infrastructure') ? 'infrastructure' : 'policy';
      return { response, decision: 'denied', rule, reason: outcome.denials.join(' | ') };
    }
    return {
      response,
      decision: outcome.warnings.length > 0 ? 'warned' : 'allowed',
      rule: decision.rule,
      ...(outcome.warnings.length > 0 ? { reason: outcome.warnings.join(' | ') } : {}),
    };
  }

  /** Pins planned image fields to the digests their tags point at now; the validating call verifies. */
  async #mutate(
    request: AdmissionRequest,
    decision: AdmissionDecision,
    checks: readonly ImageCheck[],
    credentials: CredentialSource | undefined,
    context: ReviewContext,
  ): Promise<ReviewOutcome> {
    const digests = new Map<string, string>();
    if (decision.action === 'verify' && decision.mutations.length > 0) {
      const planned = new Set(decision.mutations.map((m) => m.path));
      await Promise.all(
        checks.map(async (check) => {
          // Only images some policy verifies are pinned: others are not Signet's business.
          if (check.kind !== 'verify' || !planned.has(check.target.path)) return;
          try {
            const digest = await this.#o.verifier.resolveDigest(check.reference, {
              signal: context.signal,
              deadline: context.deadline,
              ...(credentials ? { credentials } : {}),
            });
            digests.set(check.target.path, digest);
          } catch (error) {
            // Not pinned: the validating endpoint resolves again and denies if it must.
            this.#o.logger.warn(
              { uid: request.uid, image: check.target.image, err: error },
              'cannot resolve a tag to pin it',
            );
          }
        }),
      );
    }
    const { uid: _uid, ...response } = mutatingResponse(request.uid, decision, digests);
    return { response, decision: 'allowed', rule: digests.size > 0 ? 'pinned-digests' : decision.rule };
  }

  /** The admitted object's pull secrets, its ServiceAccount's, and the policies' signature pull secrets. */
  async #credentials(
    request: AdmissionRequest,
    checks: readonly ImageCheck[],
    toVerify: (check: ImageCheck & { kind: 'verify' }) => PolicyToVerify[],
  ): Promise<CredentialSource | undefined> {
    const lookup = this.#o.pullSecrets;
    const namespace = request.namespace;
    if (lookup === undefined || namespace === undefined || !checks.some((c) => c.kind === 'verify'))
      return undefined;
    const { names, account } = pullSecretNames(request, checks, toVerify);
    try {
      for (const name of await lookup.serviceAccountPullSecrets(namespace, account)) names.add(name);
    } catch (error) {
      this.#o.logger.warn(
        { uid: request.uid, err: error },
        'cannot read the ServiceAccount; its pull secrets are not used',
      );
    }
    const secrets = await Promise.all(
      [...names].map((name) =>
        lookup.secret(namespace, name).catch((error: unknown) => {
          this.#o.logger.warn(
            { uid: request.uid, secret: `${namespace}/${name}`, err: error },
            'cannot read a pull secret',
          );
          return undefined;
        }),
      ),
    );
    const entries = secrets.flatMap((secret) => {
      if (secret === undefined) return [];
      try {
        return credentialsFromSecret(secret);
      } catch (error) {
        // The kubelet ignores a Secret it cannot use as a pull secret; so does Signet, but says so.
        this.#o.logger.warn({ uid: request.uid, err: error }, 'ignoring a pull secret');
        return [];
      }
    });
    return entries.length === 0 ? undefined : new Keychain(entries);
  }
}

/** Pull secret names from the pod spec and the matching policies, and the pod's ServiceAccount. */
function pullSecretNames(
  request: AdmissionRequest,
  checks: readonly ImageCheck[],
  toVerify: (check: ImageCheck & { kind: 'verify' }) => PolicyToVerify[],
): { names: Set<string>; account: string } {
  const info = workloadForKind(request.kind.group, request.kind.kind);
  const spec = info && request.object ? podSpecOf(info, request.object) : undefined;
  const names = new Set<string>();
  const refs: unknown = spec?.imagePullSecrets;
  for (const ref of Array.isArray(refs) ? refs : []) {
    if (typeof ref?.name === 'string') names.add(ref.name);
  }
  const sources = checks
    .flatMap((check) => (check.kind === 'verify' ? toVerify(check) : []))
    .flatMap((policy) => policy.compiled.authorities)
    .flatMap((authority) => authority.sources);
  for (const source of sources) for (const name of source.signaturePullSecrets) names.add(name);
  const account = typeof spec?.serviceAccountName === 'string' ? spec.serviceAccountName : 'default';
  return { names, account };
}
