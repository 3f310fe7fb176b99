/** What went wrong, for callers that branch on it. Never branch on the message. */
export type CoreErrorCode = 'INVALID_REFERENCE' | 'INVALID_GLOB' | 'INVALID_SELECTOR';

/** Base of every error `@signet/core` throws on purpose. */
export class CoreError extends Error {
  override readonly name: string = 'CoreError';
  readonly code: CoreErrorCode;

  constructor(code: CoreErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

/** An image reference that the container runtime would not accept either. */
export class InvalidReferenceError extends CoreError {
  override readonly name = 'InvalidReferenceError';
  /** The reference exactly as written. */
  readonly reference: string;
  /** What is wrong with it, without the reference: `repository name must be lowercase`. */
  readonly problem: string;

  constructor(reference: string, problem: string, options?: ErrorOptions) {
    super('INVALID_REFERENCE', `invalid image reference ${quote(reference)}: ${problem}`, options);
    this.reference = reference;
    this.problem = problem;
  }
}

/** A policy object that cannot be compiled: a bad glob or label selector. */
export type InvalidPolicyCode = 'INVALID_GLOB' | 'INVALID_SELECTOR';

/** The kinds of object whose globs and selectors core compiles. */
export type PolicyObjectKind = 'ClusterImagePolicy' | 'ImagePolicy' | 'ImagePolicyException';

export class InvalidPolicyError extends CoreError {
  override readonly name = 'InvalidPolicyError';
  declare readonly code: InvalidPolicyCode;
  /** The policy's name (`namespace/name` for a namespaced object), when known. */
  readonly policy: string | undefined;
  /** Field path inside the policy (`spec.images[1].glob`), `''` when not known. */
  readonly path: string;
  readonly problem: string;
  /** What kind of object `policy` names. */
  readonly kind: PolicyObjectKind;

  constructor(
    code: InvalidPolicyCode,
    policy: string | undefined,
    path: string,
    problem: string,
    options?: ErrorOptions & { readonly kind?: PolicyObjectKind },
  ) {
    const kind = options?.kind ?? 'ClusterImagePolicy';
    const where = [policy === undefined ? '' : `${kind} ${quote(policy)}`, path]
      .filter((part) => part !== '')
      .join(' ');
    super(code, where === '' ? problem : `${where}: ${problem}`, options);
    this.policy = policy;
    this.path = path;
    this.problem = problem;
    this.kind = kind;
  }
}

/** Quotes a value for a one-line message, escaping control characters and capping the length. */
export function quote(value: string): string {
  return JSON.stringify(value.length > 300 ? `${value.slice(0, 300)}...` : value);
}
