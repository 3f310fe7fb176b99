import type { ObjectMeta, Status } from 'kubernetes-types/meta/v1.js';
import { AdmissionReviewError } from './errors.js';
import {
  describe,
  expectObject,
  type Fail,
  isObject,
  type JsonObject,
  join,
  optionalBoolean,
  optionalList,
  optionalObject,
  optionalString,
  requiredString,
  stringItem,
} from './fields.js';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export interface GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
const OPERATIONS: ReadonlySet<string> = new Set<Operation>(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

export interface UserInfo {
  readonly username?: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** Any Kubernetes object as raw JSON: what the API server puts in `object` and `oldObject`. */
export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: ObjectMeta;
  readonly [field: string]: unknown;
}

export interface AdmissionRequest {
  readonly uid: string;
  readonly kind: GroupVersionKind;
  readonly resource: GroupVersionResource;
  readonly subResource?: string;
  readonly requestKind?: GroupVersionKind;
  readonly requestResource?: GroupVersionResource;
  readonly requestSubResource?: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly operation: Operation;
  readonly userInfo: UserInfo;
  /** The object after the operation; `null` for DELETE. */
  readonly object: KubeObject | null;
  /** The object before the operation; `null` for CREATE and CONNECT. */
  readonly oldObject: KubeObject | null;
  readonly dryRun?: boolean;
  readonly options?: JsonObject;
}

export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: Status;
  readonly warnings?: readonly string[];
  readonly patchType?: 'JSONPatch';
  /** base64 of an RFC 6902 JSON patch. */
  readonly patch?: string;
  readonly auditAnnotations?: Readonly<Record<string, string>>;
}

/**
 * An AdmissionResponse before it is addressed: decisions produce answers, and only the HTTP layer,
 * which holds the request, adds its `uid`.
 */
export type AdmissionAnswer = Omit<AdmissionResponse, 'uid'>;

export interface AdmissionReview {
  readonly apiVersion: typeof ADMISSION_API_VERSION;
  readonly kind: 'AdmissionReview';
  readonly request?: AdmissionRequest;
  readonly response?: AdmissionResponse;
}

/** A review as it arrives from the API server: the request is always there. */
export interface IncomingAdmissionReview extends AdmissionReview {
  readonly request: AdmissionRequest;
}

/** Wraps a response in the AdmissionReview envelope the API server expects back. */
export function admissionReviewFor(response: AdmissionResponse): AdmissionReview {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}

export interface ParseOptions {
  /** Deepest nesting accepted inside `object` and `oldObject` (default 100). */
  readonly maxDepth?: number;
  /**
   * Whether the nesting was already bounded (by `parseAdmissionReviewJson`'s scan of the raw
   * text): then the objects are not walked a second time for their depth.
   */
  readonly nestingChecked?: boolean;
}

/**
 * Bodies up to this size are parsed without the bracket scan first: what their nesting can cost
 * `JSON.parse` is bounded by their size, and the parsed objects' depth is checked instead.
 */
const SCAN_FROM_BYTES = 32 * 1024;

const DEFAULT_MAX_DEPTH = 100;

/**
 * Validates an incoming `admission.k8s.io/v1` AdmissionReview (already JSON-parsed) and returns
 * it typed. Throws only {@link AdmissionReviewError}, whose `path` names the offending field and
 * whose `uid` carries the request uid whenever it could be read.
 *
 * The objects are validated for shape (JSON objects of the request's kind, bounded nesting) but
 * not copied: the returned review shares them with the input.
 */
export function parseAdmissionReview(body: unknown, options: ParseOptions = {}): IncomingAdmissionReview {
  let uid: string | undefined;
  const fail: Fail = (path, problem) => {
    throw new AdmissionReviewError(path, problem, uid);
  };
  try {
    const review = expectObject(body, '', fail);
    if (review.apiVersion !== ADMISSION_API_VERSION) {
      fail('apiVersion', `must be "${ADMISSION_API_VERSION}", got ${quoted(review.apiVersion)}`);
    }
    if (review.kind !== 'AdmissionReview')
      fail('kind', `must be "AdmissionReview", got ${quoted(review.kind)}`);
    const raw = review.request;
    if (raw === undefined || raw === null) fail('request', 'required object');
    const request = expectObject(raw, 'request', fail);
    if (typeof request.uid === 'string' && request.uid !== '') uid = request.uid;
    const maxDepth = options.nestingChecked
      ? Number.POSITIVE_INFINITY
      : (options.maxDepth ?? DEFAULT_MAX_DEPTH);
    const parsed = parseRequest(request, fail, maxDepth);
    return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', request: parsed };
  } catch (error) {
    if (error instanceof AdmissionReviewError) throw error;
    // The contract is "only our own error type": anything unexpected is wrapped, cause kept.
    throw new AdmissionReviewError('', `unreadable review: ${String(error)}`, uid, { cause: error });
  }
}

/**
 * Parses a raw request body (the bytes the API server sent) into a review. The nesting of a large
 * body is bounded before `JSON.parse` runs, so a hostile body of millions of brackets costs one
 * linear scan; a small one's parsed objects are measured instead (one walk either way).
 */
export function parseAdmissionReviewJson(
  text: string | Uint8Array,
  options: ParseOptions = {},
): IncomingAdmissionReview {
  const source =
    typeof text === 'string'
      ? text
      : Buffer.isBuffer(text)
        ? text.toString('utf8')
        : new TextDecoder('utf-8', { fatal: false }).decode(text);
  // Two levels for the envelope (review, request) on top of what the objects may use.
  const limit = (options.maxDepth ?? DEFAULT_MAX_DEPTH) + 2;
  const scan = source.length >= SCAN_FROM_BYTES;
  if (scan && jsonNestingExceeds(source, limit))
    throw new AdmissionReviewError('', `JSON nested deeper than ${limit} levels`);
  let body: unknown;
  try {
    body = JSON.parse(source);
  } catch (error) {
    throw new AdmissionReviewError('', `body is not valid JSON: ${(error as Error).message}`, undefined, {
      cause: error,
    });
  }
  return parseAdmissionReview(body, scan ? { ...options, nestingChecked: true } : options);
}

/** True when brackets nest deeper than `limit` anywhere outside JSON strings. */
export function jsonNestingExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > limit) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}

function parseRequest(request: JsonObject, fail: Fail, maxDepth: number): AdmissionRequest {
  const p = 'request';
  const uid = requiredString(request, 'uid', p, fail);
  if (uid === '') fail('request.uid', 'must not be empty');
  const kind = parseGVK(request.kind, 'request.kind', fail);
  const resource = parseGVR(request.resource, 'request.resource', fail);
  const operation = requiredString(request, 'operation', p, fail);
  if (!OPERATIONS.has(operation)) {
    fail('request.operation', `must be one of CREATE, UPDATE, DELETE, CONNECT, got ${quoted(operation)}`);
  }
  const out: Record<string, unknown> = {
    uid,
    kind,
    resource,
    operation,
    userInfo: parseUserInfo(request.userInfo, fail),
    object: parseObject(request, 'object', kind.kind, fail, maxDepth),
    oldObject: parseObject(request, 'oldObject', kind.kind, fail, maxDepth),
  };
  setIfDefined(out, 'subResource', optionalString(request, 'subResource', p, fail));
  setIfDefined(out, 'requestSubResource', optionalString(request, 'requestSubResource', p, fail));
  setIfDefined(out, 'name', optionalString(request, 'name', p, fail));
  setIfDefined(out, 'namespace', optionalString(request, 'namespace', p, fail));
  setIfDefined(out, 'dryRun', optionalBoolean(request, 'dryRun', p, fail));
  setIfDefined(out, 'options', optionalObject(request, 'options', p, fail));
  if (request.requestKind != null)
    out.requestKind = parseGVK(request.requestKind, 'request.requestKind', fail);
  if (request.requestResource != null) {
    out.requestResource = parseGVR(request.requestResource, 'request.requestResource', fail);
  }
  checkOperationObjects(out.operation as Operation, out.object, out.oldObject, fail);
  return out as unknown as AdmissionRequest;
}

function checkOperationObjects(operation: Operation, object: unknown, oldObject: unknown, fail: Fail): void {
  if ((operation === 'CREATE' || operation === 'UPDATE') && object === null) {
    fail('request.object', `required object for ${operation}`);
  }
  if (operation === 'UPDATE' && oldObject === null) fail('request.oldObject', 'required object for UPDATE');
}

function setIfDefined(target: Record<string, unknown>, key: string, value: unknown): void {
  if (value !== undefined) target[key] = value;
}

function parseGVK(value: unknown, path: string, fail: Fail): GroupVersionKind {
  if (value === undefined || value === null) fail(path, 'required object');
  const obj = expectObject(value, path, fail);
  return {
    group: requiredString(obj, 'group', path, fail),
    version: requiredString(obj, 'version', path, fail),
    kind: requiredString(obj, 'kind', path, fail),
  };
}

function parseGVR(value: unknown, path: string, fail: Fail): GroupVersionResource {
  if (value === undefined || value === null) fail(path, 'required object');
  const obj = expectObject(value, path, fail);
  return {
    group: requiredString(obj, 'group', path, fail),
    version: requiredString(obj, 'version', path, fail),
    resource: requiredString(obj, 'resource', path, fail),
  };
}

function parseUserInfo(value: unknown, fail: Fail): UserInfo {
  const path = 'request.userInfo';
  if (value === undefined || value === null) fail(path, 'required object');
  const obj = expectObject(value, path, fail);
  const out: Record<string, unknown> = {};
  setIfDefined(out, 'username', optionalString(obj, 'username', path, fail));
  setIfDefined(out, 'uid', optionalString(obj, 'uid', path, fail));
  if (obj.groups != null) out.groups = optionalList(obj, 'groups', path, fail, stringItem(fail));
  const extra = optionalObject(obj, 'extra', path, fail);
  if (extra !== undefined) {
    const parsed: Record<string, string[]> = {};
    for (const key of Object.keys(extra)) {
      parsed[key] = optionalList(extra, key, join(path, 'extra'), fail, stringItem(fail));
    }
    out.extra = parsed;
  }
  return out as UserInfo;
}

function parseObject(
  request: JsonObject,
  key: 'object' | 'oldObject',
  kind: string,
  fail: Fail,
  maxDepth: number,
): KubeObject | null {
  const value = request[key];
  const path = `request.${key}`;
  if (value === undefined || value === null) return null;
  const obj = expectObject(value, path, fail);
  if (obj.kind !== undefined && obj.kind !== kind) {
    fail(join(path, 'kind'), `must be ${quoted(kind)} as in request.kind, got ${quoted(obj.kind)}`);
  }
  if (obj.metadata !== undefined && obj.metadata !== null && !isObject(obj.metadata)) {
    fail(join(path, 'metadata'), `must be an object, got ${describe(obj.metadata)}`);
  }
  if (depthExceeds(obj, maxDepth)) fail(path, `nested deeper than ${maxDepth} levels`);
  return obj as KubeObject;
}

/**
 * Recursive but bounded: it stops descending at `limit`, so a hostile object cannot exhaust the
 * stack while being measured, and it allocates nothing on the hot path.
 */
function depthExceeds(value: object, limit: number): boolean {
  if (limit === Number.POSITIVE_INFINITY) return false;
  if (limit === 0) return true;
  if (Array.isArray(value)) {
    for (const child of value) {
      if (typeof child === 'object' && child !== null && depthExceeds(child, limit - 1)) return true;
    }
    return false;
  }
  for (const key in value) {
    const child = (value as JsonObject)[key];
    if (typeof child === 'object' && child !== null && depthExceeds(child, limit - 1)) return true;
  }
  return false;
}

function quoted(value: unknown): string {
  if (typeof value === 'string')
    return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}...` : value);
  return describe(value);
}
