// The `ImagePolicyException` parser (`policy.signet.dev/v1alpha1`): which images, which policies
// (by kind and name), why, and until when. Whether it is still valid (expired, or longer-lived than
// the operator allows) is decided where the time is known: `@signet/core` at admission, the
// policy webhook at apply time.
import { expectObject, type Fail, join, optionalList, optionalString, requiredString } from '../fields.js';
import { checkTypeMeta, namespacedLabel, parseNamespacedMetadata, timestampMs } from './namespaced.js';
import {
  EXCEPTION_LIMITS,
  EXEMPTABLE_KINDS,
  type ExceptionImage,
  type ExemptedPolicy,
  type ImagePolicyException,
  SIGNET_POLICY_API_VERSION,
} from './namespaced-types.js';
import { compact, failFor, isOneOf, specOf } from './parse.js';

export interface ImagePolicyExceptionParseOptions {
  /** The namespace of an object that names none (a file's objects, as with kubectl). */
  readonly namespace?: string;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;
/** A Kubernetes object name: a DNS subdomain. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** Parses an `ImagePolicyException`. Throws `PolicyParseError` naming the field path. */
export function parseImagePolicyException(
  body: unknown,
  options: ImagePolicyExceptionParseOptions = {},
): ImagePolicyException {
  const fail = failFor(namespacedLabel('ImagePolicyException', body));
  const root = expectObject(body, '', fail);
  checkTypeMeta(root, 'ImagePolicyException', fail);
  const metadata = parseNamespacedMetadata(root, fail, options.namespace);
  const spec = specOf(root, fail);
  const images = bounded(
    optionalList(spec, 'images', 'spec', fail, (v, p) => parseImage(v, p, fail)),
    'spec.images',
    EXCEPTION_LIMITS.images,
    'image',
    fail,
  );
  const policies = bounded(
    optionalList(spec, 'policies', 'spec', fail, (v, p) => parsePolicyRef(v, p, fail)),
    'spec.policies',
    EXCEPTION_LIMITS.policies,
    'policy',
    fail,
  );
  const reason = requiredString(spec, 'reason', 'spec', fail);
  if (reason.trim() === '') fail('spec.reason', 'must say why the exception exists');
  if (reason.length > EXCEPTION_LIMITS.reason) {
    fail('spec.reason', `at most ${EXCEPTION_LIMITS.reason} characters, got ${reason.length}`);
  }
  const expires = requiredString(spec, 'expires', 'spec', fail);
  timestampMs(expires, 'spec.expires', fail);
  return {
    apiVersion: SIGNET_POLICY_API_VERSION,
    kind: 'ImagePolicyException',
    metadata,
    spec: { images, policies, reason, expires },
  };
}

function bounded<T>(list: T[], path: string, max: number, what: string, fail: Fail): T[] {
  if (list.length === 0) fail(path, `at least one ${what} is required`);
  if (list.length > max) fail(path, `at most ${max} entries, got ${list.length}`);
  return list;
}

function parseImage(value: unknown, path: string, fail: Fail): ExceptionImage {
  const item = expectObject(value, path, fail);
  const glob = optionalString(item, 'glob', path, fail);
  const digest = optionalString(item, 'digest', path, fail);
  if ((glob === undefined) === (digest === undefined))
    fail(path, 'exactly one of glob or digest is required');
  if (glob !== undefined) {
    if (glob === '') fail(join(path, 'glob'), 'must not be empty');
    return { glob };
  }
  if (!DIGEST.test(digest as string)) {
    fail(join(path, 'digest'), `must be sha256: and 64 lowercase hex digits, got ${JSON.stringify(digest)}`);
  }
  return { digest: digest as string };
}

function parsePolicyRef(value: unknown, path: string, fail: Fail): ExemptedPolicy {
  const item = expectObject(value, path, fail);
  const kind = requiredString(item, 'kind', path, fail);
  if (!isOneOf(kind, EXEMPTABLE_KINDS)) {
    return fail(
      join(path, 'kind'),
      `must be one of ${EXEMPTABLE_KINDS.join(', ')}, got ${JSON.stringify(kind)}`,
    );
  }
  const name = requiredString(item, 'name', path, fail);
  if (!OBJECT_NAME.test(name)) {
    fail(join(path, 'name'), `must be the name of a ${kind} (no globs), got ${JSON.stringify(name)}`);
  }
  return compact<ExemptedPolicy>({ kind, name });
}
