/** What kind of input an error is about. Callers branch on the code, never on the message. */
export type FieldErrorCode = 'INVALID_ADMISSION_REVIEW' | 'INVALID_OBJECT' | 'INVALID_POLICY';

/**
 * An input value is not what it must be. `path` names the offending field as a JSON path
 * (`request.uid`, `spec.authorities[0].key`); the message is `<path>: <problem>`.
 */
export class FieldError extends Error {
  override readonly name: string = 'FieldError';
  readonly code: FieldErrorCode;
  readonly path: string;
  readonly problem: string;

  constructor(code: FieldErrorCode, path: string, problem: string, options?: ErrorOptions) {
    super(`${path === '' ? '<root>' : path}: ${problem}`, options);
    this.code = code;
    this.path = path;
    this.problem = problem;
  }
}

/** An AdmissionReview body is malformed. `uid` is set when the request's uid could be read. */
export class AdmissionReviewError extends FieldError {
  override readonly name = 'AdmissionReviewError';
  readonly uid: string | undefined;

  constructor(path: string, problem: string, uid?: string, options?: ErrorOptions) {
    super('INVALID_ADMISSION_REVIEW', path, problem, options);
    this.uid = uid;
  }
}

/** A policy object (ClusterImagePolicy, TrustRoot, config ConfigMap) is malformed. */
export class PolicyParseError extends FieldError {
  override readonly name = 'PolicyParseError';
  /** `ClusterImagePolicy/name`, `TrustRoot/name` or `ConfigMap/name`, when known. */
  readonly object: string | undefined;

  constructor(object: string | undefined, path: string, problem: string, options?: ErrorOptions) {
    super('INVALID_POLICY', path, object === undefined ? problem : `${problem} (in ${object})`, options);
    this.object = object;
  }
}

/** A Kubernetes object inside a valid review does not have the shape its kind requires. */
export class ObjectShapeError extends FieldError {
  override readonly name = 'ObjectShapeError';

  constructor(path: string, problem: string) {
    super('INVALID_OBJECT', path, problem);
  }
}
