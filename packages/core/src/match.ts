// Which ClusterImagePolicies apply to an image, with sigstore policy-controller's rules: a policy
// applies when one of its globs matches the image and, if it has `match` entries, one of them
// matches the admitted object's resource and labels. Every applying policy must pass (AND);
// when none applies, the `no-match-policy` decides (deny by default).
import {
  type AdmissionRequest,
  ALLOW_UNPINNED_TAGS_ANNOTATION,
  type ClusterImagePolicy,
  type MatchResource,
  type NoMatchPolicy,
  type PolicyMode,
  policyModeOf,
} from '@signet/k8s-types';
import { InvalidPolicyError } from './errors.js';
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
}

/** A ClusterImagePolicy ready to match. Compile once per policy change, never per admission. */
export interface CompiledPolicy {
  readonly name: string;
  /** `enforce` unless the policy says `warn`. */
  readonly mode: PolicyMode;
  readonly policy: ClusterImagePolicy;
  readonly globs: readonly Glob[];
  /** The policy lets Pods run tags, not only digests (annotation `signet.dev/allow-unpinned-tags`). */
  readonly allowsUnpinnedTags: boolean;
  /** True when the policy's `match` entries let it apply to the subject. */
  appliesTo(subject: MatchSubject): boolean;
}

/**
 * All policies of the cluster, sorted by name, and what happens to images none of them match.
 * `P` lets a caller keep its own record per policy (a compiled policy plus what it needs to
 * verify it), so matching hands back that record and nothing is joined by name afterwards.
 */
export interface PolicySet<P extends CompiledPolicy = CompiledPolicy> {
  readonly policies: readonly P[];
  readonly noMatchPolicy: NoMatchPolicy;
}

/** For one image: the policies it must pass (all of them), or the no-match outcome. */
export type PolicyMatch<P extends CompiledPolicy = CompiledPolicy> =
  | { readonly kind: 'matched'; readonly policies: readonly P[] }
  | { readonly kind: 'no-match'; readonly action: NoMatchPolicy };

/**
 * Compiles one policy. Throws {@link InvalidPolicyError} (`INVALID_GLOB`, `INVALID_SELECTOR`)
 * naming the policy and the field, with the underlying error as `cause`.
 */
export function compilePolicy(policy: ClusterImagePolicy): CompiledPolicy {
  const name = policy.metadata.name;
  const globs = policy.spec.images.map((image, index) =>
    within(name, `spec.images[${index}].glob`, () => compileGlob(image.glob)),
  );
  const entries = (policy.spec.match ?? []).map((entry, index) =>
    within(name, `spec.match[${index}].selector`, () => compileMatchResource(entry)),
  );
  return {
    name,
    mode: policyModeOf(policy),
    policy,
    globs,
    allowsUnpinnedTags: policy.metadata.annotations?.[ALLOW_UNPINNED_TAGS_ANNOTATION] === 'true',
    appliesTo: (subject) => entries.length === 0 || entries.some((entry) => entry(subject)),
  };
}

/**
 * Compiles every policy into a {@link PolicySet}. One invalid policy makes the whole set invalid
 * (the first error is thrown): skipping it would let the images it guards fall through to the
 * no-match policy, which may be `allow`.
 */
export function compilePolicies(
  policies: readonly ClusterImagePolicy[],
  config: { readonly noMatchPolicy?: NoMatchPolicy } = {},
): PolicySet {
  return policySet(policies.map(compilePolicy), config);
}

/** A set of already compiled policies (or records extending them), sorted by name. */
export function policySet<P extends CompiledPolicy>(
  policies: readonly P[],
  config: { readonly noMatchPolicy?: NoMatchPolicy } = {},
): PolicySet<P> {
  const sorted = [...policies].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { policies: sorted, noMatchPolicy: config.noMatchPolicy ?? 'deny' };
}

/** The policies an image must pass in the context of the admitted object. */
export function matchPolicies<P extends CompiledPolicy>(
  set: PolicySet<P>,
  reference: ImageReference,
  subject: MatchSubject,
): PolicyMatch<P> {
  const name = reference.matchName;
  const policies = set.policies.filter(
    (policy) => policy.appliesTo(subject) && policy.globs.some((glob) => glob.matches(name)),
  );
  return policies.length > 0
    ? { kind: 'matched', policies }
    : { kind: 'no-match', action: set.noMatchPolicy };
}

/**
 * The subject `match` entries are checked against: the request's group, version and plural
 * resource (as the API server routed it), and the labels of the admitted object.
 */
export function matchSubjectOf(request: AdmissionRequest): MatchSubject {
  const { group, version, resource } = request.resource;
  return { group, version, resource, labels: request.object?.metadata?.labels ?? {} };
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

function within<T>(policy: string, path: string, compile: () => T): T {
  try {
    return compile();
  } catch (error) {
    if (!(error instanceof InvalidPolicyError)) throw error;
    const where = error.path === '' ? path : `${path}.${error.path}`;
    throw new InvalidPolicyError(error.code, policy, where, error.problem, { cause: error });
  }
}
