// Which policies apply to an image admitted in a namespace. A policy applies when one of its globs
// matches the image and, if it has `match` entries, one of them matches the admitted object's
// resource and labels (sigstore policy-controller's rules). Every applying ClusterImagePolicy and
// every applying ImagePolicy of the namespace must pass (AND). Only ClusterImagePolicies decide
// whether an image is matched at all: when none applies, the `no-match-policy` decides (deny by
// default), and ImagePolicies can only add to what it admits. A valid ImagePolicyException of the
// namespace removes the policies it names, and only those, for the images it names.
import {
  type AdmissionRequest,
  ALLOW_UNPINNED_TAGS_ANNOTATION,
  type ClusterImagePolicy,
  type ImagePolicy,
  type ImagePolicyException,
  type MatchResource,
  type NoMatchPolicy,
  type PolicyMode,
  policyModeOf,
} from '@signet/k8s-types';
import { InvalidPolicyError, type PolicyObjectKind } from './errors.js';
import {
  type CompiledException,
  compileException,
  DEFAULT_MAX_EXCEPTION_LIFETIME_MS,
  type Exemption,
  exceptionState,
} from './exceptions.js';
import { compileGlob, type Glob } from './glob.js';
import type { ImageReference } from './reference.js';
import { compileSelector, type LabelMatcher, type Labels } from './selector.js';

/** The admitted object as `match` entries see it. */
export interface MatchSubject {
  /** API group of the object (`''` for core), e.g. `apps`. */
  readonly group: string;
  readonly version: string;
  /** Plural resource: `deployments`, `pods`. */
  readonly resource: string;
  /** The object's own labels (not its pod template's), which `match[].selector` reads. */
  readonly labels: Labels;
  /** The request's namespace: whose ImagePolicies and exceptions apply (`''`: none). */
  readonly namespace?: string;
}

/** A ClusterImagePolicy or ImagePolicy ready to match. Compile once per change, never per admission. */
export interface CompiledPolicy {
  /** A ClusterImagePolicy's name; `namespace/name` for an ImagePolicy (the two never collide). */
  readonly name: string;
  readonly kind: 'ClusterImagePolicy' | 'ImagePolicy';
  /** An ImagePolicy's namespace; `undefined` for a ClusterImagePolicy. */
  readonly namespace: string | undefined;
  /** `enforce` unless a ClusterImagePolicy says `warn`; an ImagePolicy always enforces. */
  readonly mode: PolicyMode;
  readonly policy: ClusterImagePolicy | ImagePolicy;
  readonly globs: readonly Glob[];
  /**
   * The policy lets Pods run tags, not only digests (annotation `signet.dev/allow-unpinned-tags`
   * on a ClusterImagePolicy; whether tags may run is the cluster's choice, never an ImagePolicy's).
   */
  readonly allowsUnpinnedTags: boolean;
  /** True when the policy's `match` entries let it apply to the subject. */
  appliesTo(subject: MatchSubject): boolean;
}

/**
 * Everything that decides which policies an image must pass: the ClusterImagePolicies, each
 * namespace's ImagePolicies and exceptions, and what happens to images no ClusterImagePolicy
 * matches. `P` lets a caller keep its own record per policy (a compiled policy plus what it needs
 * to verify it), so matching hands back that record and nothing is joined by name afterwards.
 */
export interface PolicySet<P extends CompiledPolicy = CompiledPolicy> {
  /** The ClusterImagePolicies, sorted by name. */
  readonly policies: readonly P[];
  readonly noMatchPolicy: NoMatchPolicy;
  /** Each namespace's ImagePolicies, sorted by name. */
  readonly namespaced: ReadonlyMap<string, readonly P[]>;
  /** Each namespace's exceptions, sorted by name. */
  readonly exceptions: ReadonlyMap<string, readonly CompiledException[]>;
  /** The longest an exception may live, creation to expiry; a longer-lived one applies to nothing. */
  readonly maxExceptionLifetimeMs: number;
}

/** What a policy set is made of besides its policies. */
export interface PolicySetConfig {
  readonly noMatchPolicy?: NoMatchPolicy;
  readonly exceptions?: readonly CompiledException[];
  /** Default {@link DEFAULT_MAX_EXCEPTION_LIFETIME_MS} (30 days). */
  readonly maxExceptionLifetimeMs?: number;
}

/**
 * For one image: the policies it must pass (all of them), what exceptions removed, or the
 * no-match outcome. `noClusterPolicy` says that no ClusterImagePolicy matched, so the no-match
 * policy (`warn` or `allow`; `deny` is a `no-match`) applies besides the ImagePolicies.
 */
export type PolicyMatch<P extends CompiledPolicy = CompiledPolicy> =
  | {
      readonly kind: 'matched';
      /** Never empty. */
      readonly policies: readonly P[];
      readonly exemptions: readonly Exemption[];
      readonly noClusterPolicy?: 'warn' | 'allow';
    }
  | {
      /** Policies applied, and exceptions removed every one of them: nothing left to verify. */
      readonly kind: 'exempted';
      readonly exemptions: readonly Exemption[];
      readonly noClusterPolicy?: 'warn' | 'allow';
    }
  | { readonly kind: 'no-match'; readonly action: NoMatchPolicy };

/**
 * Compiles one ClusterImagePolicy or ImagePolicy. Throws {@link InvalidPolicyError}
 * (`INVALID_GLOB`, `INVALID_SELECTOR`) naming the policy and the field, with the underlying error
 * as `cause`.
 */
export function compilePolicy(policy: ClusterImagePolicy | ImagePolicy): CompiledPolicy {
  const namespaced = policy.kind === 'ImagePolicy';
  const namespace = namespaced ? policy.metadata.namespace : undefined;
  const name = namespaced ? `${namespace}/${policy.metadata.name}` : policy.metadata.name;
  const globs = policy.spec.images.map((image, index) =>
    within(policy.kind, name, `spec.images[${index}].glob`, () => compileGlob(image.glob)),
  );
  const entries = (policy.spec.match ?? []).map((entry, index) =>
    within(policy.kind, name, `spec.match[${index}].selector`, () => compileMatchResource(entry)),
  );
  return {
    name,
    kind: policy.kind,
    namespace,
    mode: namespaced ? 'enforce' : policyModeOf(policy),
    policy,
    globs,
    allowsUnpinnedTags:
      !namespaced && policy.metadata.annotations?.[ALLOW_UNPINNED_TAGS_ANNOTATION] === 'true',
    appliesTo: (subject) => entries.length === 0 || entries.some((entry) => entry(subject)),
  };
}

/**
 * Compiles every policy and exception into a {@link PolicySet}. One invalid object makes the whole
 * set invalid (the first error is thrown): skipping a policy would let the images it guards fall
 * through to the no-match policy, which may be `allow`.
 */
export function compilePolicies(
  policies: readonly (ClusterImagePolicy | ImagePolicy)[],
  config: Omit<PolicySetConfig, 'exceptions'> & {
    readonly exceptions?: readonly ImagePolicyException[];
  } = {},
): PolicySet {
  return policySet(policies.map(compilePolicy), {
    ...config,
    exceptions: (config.exceptions ?? []).map(compileException),
  });
}

/**
 * A set of already compiled policies (or records extending them) and exceptions: the
 * ClusterImagePolicies sorted by name, the ImagePolicies and exceptions by namespace.
 */
export function policySet<P extends CompiledPolicy>(
  policies: readonly P[],
  config: PolicySetConfig = {},
): PolicySet<P> {
  const sorted = [...policies].sort(byName);
  const namespaced = new Map<string, P[]>();
  for (const policy of sorted) {
    if (policy.namespace === undefined) continue;
    namespaced.set(policy.namespace, [...(namespaced.get(policy.namespace) ?? []), policy]);
  }
  const exceptions = new Map<string, CompiledException[]>();
  for (const exception of [...(config.exceptions ?? [])].sort(byName)) {
    exceptions.set(exception.namespace, [...(exceptions.get(exception.namespace) ?? []), exception]);
  }
  return {
    policies: sorted.filter((policy) => policy.namespace === undefined),
    noMatchPolicy: config.noMatchPolicy ?? 'deny',
    namespaced,
    exceptions,
    maxExceptionLifetimeMs: config.maxExceptionLifetimeMs ?? DEFAULT_MAX_EXCEPTION_LIFETIME_MS,
  };
}

function byName(a: { readonly name: string }, b: { readonly name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * The policies an image must pass in the context of the admitted object. `now` (milliseconds since
 * the epoch) decides which exceptions are valid; without it, none applies.
 */
export function matchPolicies<P extends CompiledPolicy>(
  set: PolicySet<P>,
  reference: ImageReference,
  subject: MatchSubject,
  now?: number,
): PolicyMatch<P> {
  const name = reference.matchName;
  const applies = (policy: P) => policy.appliesTo(subject) && policy.globs.some((glob) => glob.matches(name));
  const cluster = set.policies.filter(applies);
  // An ImagePolicy never changes whether an image is matched: a team's policy admitting an image
  // the cluster's no-match policy denies would loosen the cluster.
  if (cluster.length === 0 && set.noMatchPolicy === 'deny') return { kind: 'no-match', action: 'deny' };
  const namespace = subject.namespace ?? '';
  const own = (set.namespaced.get(namespace) ?? []).filter(applies);
  const noClusterPolicy =
    cluster.length === 0 ? { noClusterPolicy: set.noMatchPolicy as 'warn' | 'allow' } : {};
  if (cluster.length === 0 && own.length === 0) return { kind: 'no-match', action: set.noMatchPolicy };
  const exceptions =
    now === undefined
      ? []
      : (set.exceptions.get(namespace) ?? []).filter(
          (exception) =>
            exception.covers(reference) &&
            exceptionState(exception, now, set.maxExceptionLifetimeMs) === 'active',
        );
  const policies: P[] = [];
  const exemptions: Exemption[] = [];
  for (const policy of [...cluster, ...own]) {
    const exception = exceptions.find((candidate) => candidate.policies.has(policy.name));
    if (exception === undefined) policies.push(policy);
    else {
      const { name: by, expires, reason } = exception;
      exemptions.push({ policy: policy.name, exception: by, expires, reason });
    }
  }
  return policies.length > 0
    ? { kind: 'matched', policies, exemptions, ...noClusterPolicy }
    : { kind: 'exempted', exemptions, ...noClusterPolicy };
}

/**
 * The subject `match` entries are checked against: the request's group, version and plural
 * resource (as the API server routed it), and the labels of the admitted object.
 */
export function matchSubjectOf(request: AdmissionRequest): MatchSubject {
  const { group, version, resource } = request.resource;
  const labels = request.object?.metadata?.labels ?? {};
  return { group, version, resource, labels, namespace: request.namespace ?? '' };
}

/**
 * Upstream compares fields verbatim: `resource` and `group` must equal the object's (a missing
 * group is the core group), `version` must equal it or be `*`; so an entry without `version`
 * matches nothing, exactly as in policy-controller.
 */
function compileMatchResource(entry: MatchResource): (subject: MatchSubject) => boolean {
  const selector: LabelMatcher | undefined =
    entry.selector === undefined ? undefined : compileSelector(entry.selector);
  return (subject) =>
    entry.resource === subject.resource &&
    (entry.version === subject.version || entry.version === '*') &&
    (entry.group ?? '') === subject.group &&
    (selector === undefined || selector(subject.labels));
}

function within<T>(kind: PolicyObjectKind, policy: string, path: string, compile: () => T): T {
  try {
    return compile();
  } catch (error) {
    if (!(error instanceof InvalidPolicyError)) throw error;
    const where = error.path === '' ? path : `${path}.${error.path}`;
    throw new InvalidPolicyError(error.code, policy, where, error.problem, { cause: error, kind });
  }
}
