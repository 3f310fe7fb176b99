// ImagePolicyExceptions: a namespace's time-boxed exemption of named images from named policies.
// Whether one applies is decided at each admission from the time the caller passes in, so an
// expired exception stops applying at once, whatever a controller has or has not noticed yet.
import type { ImagePolicyException } from '@signet/k8s-types';
import { InvalidPolicyError } from './errors.js';
import { compileGlob } from './glob.js';
import type { ImageReference } from './reference.js';

/** The default longest lifetime of an exception, creation to expiry: 30 days. */
export const DEFAULT_MAX_EXCEPTION_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

/** An ImagePolicyException ready to match. Compile once per change, never per admission. */
export interface CompiledException {
  /** `namespace/name`. */
  readonly name: string;
  /** The object it was compiled from. */
  readonly exception: ImagePolicyException;
  readonly namespace: string;
  readonly reason: string;
  /** The expiry as written (RFC 3339), for messages. */
  readonly expires: string;
  readonly expiresAt: number;
  /** When the API server created it; `undefined` for an exception read from a file. */
  readonly createdAt: number | undefined;
  /**
   * The policies it exempts from, by the name core gives them: a ClusterImagePolicy's own name,
   * `namespace/name` for an ImagePolicy (always one of the exception's namespace).
   */
  readonly policies: ReadonlySet<string>;
  /** True when the exception names this image (by glob, or by its digest). */
  covers(reference: ImageReference): boolean;
}

/**
 * Whether an exception applies at `now`: `expired` from its expiry on, `too-long` when it was
 * written to live longer than the operator allows (from its creation, or from `now` for one
 * without a creation time), else `active`.
 */
export type ExceptionState = 'active' | 'expired' | 'too-long';

/** A policy an exception removed for one image: admitted without it, with a warning naming both. */
export interface Exemption {
  /** The policy's name as in verdicts (`namespace/name` for an ImagePolicy). */
  readonly policy: string;
  /** `namespace/name` of the exception. */
  readonly exception: string;
  readonly expires: string;
  readonly reason: string;
}

/**
 * Compiles an exception. Throws {@link InvalidPolicyError} (`INVALID_GLOB`) naming the exception
 * and the field.
 */
export function compileException(exception: ImagePolicyException): CompiledException {
  const { namespace, name: own, creationTimestamp } = exception.metadata;
  const name = `${namespace}/${own}`;
  const globs = exception.spec.images.map((image, index) => {
    if (!('glob' in image)) return undefined;
    try {
      return compileGlob(image.glob);
    } catch (error) {
      const cause = error as InvalidPolicyError;
      throw new InvalidPolicyError(cause.code, name, `spec.images[${index}].glob`, cause.problem, {
        cause,
        kind: 'ImagePolicyException',
      });
    }
  });
  const digests = new Set(
    exception.spec.images.flatMap((image) => ('digest' in image ? [image.digest] : [])),
  );
  const policies = new Set(
    exception.spec.policies.map((policy) =>
      policy.kind === 'ImagePolicy' ? `${namespace}/${policy.name}` : policy.name,
    ),
  );
  return {
    name,
    exception,
    namespace,
    reason: exception.spec.reason,
    expires: exception.spec.expires,
    expiresAt: Date.parse(exception.spec.expires),
    createdAt: creationTimestamp === undefined ? undefined : Date.parse(creationTimestamp),
    policies,
    covers: (reference) =>
      (reference.digest !== undefined && digests.has(reference.digest)) ||
      globs.some((glob) => glob?.matches(reference.matchName) === true),
  };
}

export function exceptionState(
  exception: Pick<CompiledException, 'expiresAt' | 'createdAt'>,
  now: number,
  maxLifetimeMs: number,
): ExceptionState {
  // NaN (an unreadable time) compares false everywhere: such an exception is never active.
  if (!(now < exception.expiresAt)) return 'expired';
  const start = exception.createdAt ?? now;
  if (!(exception.expiresAt - start <= maxLifetimeMs)) return 'too-long';
  return 'active';
}
